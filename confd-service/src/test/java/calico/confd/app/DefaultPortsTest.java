package calico.confd.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.health.CalicoHealthProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.core.io.Resource;

/**
 * confd runs beside felix in the node's network (calico-node), so no port either listens on by
 * default may be the other's. Both real {@code application.yml} files are bound as the services bind
 * them, with no variable set (so every {@code ${VAR:default}} gives Calico's default), into the
 * typed health settings ({@link CalicoHealthProperties}) and the web server's port.
 */
class DefaultPortsTest {

    private static final Path FELIX_YML = Path.of("../felix-service/src/main/resources/application.yml");

    @Test
    void confdAndFelixListenOnDifferentPortsByDefault() throws IOException {
        Binder confd = binder(new ClassPathResource("application.yml"));
        Binder felix = binder(new FileSystemResource(FELIX_YML));

        Map<String, Integer> felixPorts = Map.of(
                "felix health (FELIX_HEALTHPORT)", health(felix).port(),
                "felix admin (FELIX_ADMINPORT)", felix.bind("server.port", Integer.class).get(),
                "felix metrics (FELIX_PROMETHEUSMETRICSPORT)",
                felix.bind("felix.prometheus-metrics-port", Integer.class).get());
        Map<String, Integer> confdPorts = Map.of(
                "confd health (CONFD_HEALTHPORT)", health(confd).port(),
                "confd admin (CONFD_ADMINPORT)", confd.bind("server.port", Integer.class).get());

        assertThat(felixPorts).containsEntry("felix health (FELIX_HEALTHPORT)", 9099)
                .containsEntry("felix admin (FELIX_ADMINPORT)", 9097);
        assertThat(confdPorts.get("confd health (CONFD_HEALTHPORT)")).as("confd's health port")
                .isEqualTo(9086).isNotEqualTo(felixPorts.get("felix admin (FELIX_ADMINPORT)"));
        confdPorts.forEach((what, port) -> assertThat(felixPorts.values()).as(what + " " + port + " vs felix's "
                + felixPorts).doesNotContain(port));
    }

    private static CalicoHealthProperties health(Binder b) {
        return b.bind(CalicoHealthProperties.PREFIX, CalicoHealthProperties.class).get();
    }

    /** The file as the only property source: placeholders fall back to their defaults. */
    private static Binder binder(Resource yml) throws IOException {
        assertThat(yml.exists()).as(yml.getDescription()).isTrue();
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        env.getPropertySources().remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        new YamlPropertySourceLoader().load(yml.getDescription(), yml).forEach(env.getPropertySources()::addLast);
        return Binder.get(env);
    }
}
