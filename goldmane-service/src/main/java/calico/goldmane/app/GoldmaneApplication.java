package calico.goldmane.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** Goldmane: aggregates felix flow logs and serves them over gRPC. */
@SpringBootApplication
@EnableConfigurationProperties(GoldmaneProperties.class)
public class GoldmaneApplication {

    public static void main(String[] args) {
        SpringApplication.run(GoldmaneApplication.class, args);
    }
}
