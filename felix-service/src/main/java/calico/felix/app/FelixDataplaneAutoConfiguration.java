package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import calico.felix.dataplane.ModelDataplane;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The in-memory {@link ModelDataplane} as the dataplane, unless the application defines a
 * {@link Dataplane} bean (the kernel drivers). An auto-configuration so that the condition is
 * evaluated after every user configuration, whatever the scan order.
 */
@AutoConfiguration
public class FelixDataplaneAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(Dataplane.class)
    Dataplane dataplane() {
        return new ModelDataplane();
    }
}
