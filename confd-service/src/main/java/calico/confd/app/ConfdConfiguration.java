package calico.confd.app;

import calico.libcalico.datastore.config.DatastoreProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** confd's datastore settings: libcalico's shared record, bound under {@code confd.*}. */
@Configuration(proxyBeanMethods = false)
class ConfdConfiguration {

    /** confd's names for the shared datastore settings: {@code confd.*} from Calico's generic variables. */
    static final DatastoreProperties.Source DATASTORE = DatastoreProperties.Source.of("confd", "");

    /** The datastore confd reads (or whose settings say where password Secrets live); checked at start-up. */
    @Bean
    DatastoreProperties confdDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }
}
