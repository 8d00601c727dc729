package calico.felix.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** Felix, the per-node agent: datastore → syncer → calculation graph → dataplane. */
@SpringBootApplication(scanBasePackages = {"calico.felix.app", "calico.felix.admin"})
@EnableConfigurationProperties({FelixProperties.class, FelixTyphaProperties.class})
public class FelixApplication {

    public static void main(String[] args) {
        SpringApplication.run(FelixApplication.class, args);
    }
}
