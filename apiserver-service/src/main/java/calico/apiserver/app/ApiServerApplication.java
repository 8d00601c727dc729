package calico.apiserver.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ConfigurableApplicationContext;

/** Calico's projectcalico.org/v3 API server. */
@SpringBootApplication
@EnableConfigurationProperties(ApiServerProperties.class)
public class ApiServerApplication {

    public static void main(String[] args) {
        start(args);
    }

    /** Starts the server with Calico-style flags ({@link KubeFlags}) or Spring properties. */
    public static ConfigurableApplicationContext start(String... args) {
        return SpringApplication.run(ApiServerApplication.class, KubeFlags.translate(args));
    }
}
