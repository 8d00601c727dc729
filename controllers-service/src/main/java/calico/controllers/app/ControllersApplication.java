package calico.controllers.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** Calico's kube-controllers: node clean-up, label sync, automatic host endpoints, IPAM garbage collection. */
@SpringBootApplication
@EnableConfigurationProperties(ControllersProperties.class)
public class ControllersApplication {

    public static void main(String[] args) {
        SpringApplication.run(ControllersApplication.class, args);
    }
}
