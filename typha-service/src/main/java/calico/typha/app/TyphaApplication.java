package calico.typha.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** Typha: one datastore watch per syncer type, fanned out to felixes over gRPC. */
@SpringBootApplication
@EnableConfigurationProperties({TyphaProperties.class, TyphaMetricsProperties.class, TyphaKubernetesProperties.class})
public class TyphaApplication {

    public static void main(String[] args) {
        SpringApplication.run(TyphaApplication.class, args);
    }
}
