package calico.whisker.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/** whisker-backend: REST and server-sent events over goldmane for the whisker UI (API.md). */
@SpringBootApplication(scanBasePackages = "calico.whisker")
@EnableConfigurationProperties(WhiskerProperties.class)
public class WhiskerApplication {

    public static void main(String[] args) {
        SpringApplication.run(WhiskerApplication.class, args);
    }
}
