package calico.confd.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** confd: BIRD 2 configuration from the BGP resources, BIRD reloaded over its control socket. */
@SpringBootApplication
@EnableConfigurationProperties({ConfdProperties.class, ConfdTyphaProperties.class})
public class ConfdApplication {

    public static void main(String[] args) {
        SpringApplication.run(ConfdApplication.class, args);
    }
}
