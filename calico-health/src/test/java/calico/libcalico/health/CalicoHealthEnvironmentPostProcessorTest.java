package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

class CalicoHealthEnvironmentPostProcessorTest {

    private final CalicoHealthEnvironmentPostProcessor processor = new CalicoHealthEnvironmentPostProcessor();

    private StandardEnvironment process(String... properties) {
        StandardEnvironment environment = new StandardEnvironment();
        Map<String, Object> map = new HashMap<>();
        for (String property : properties) {
            String[] pair = property.split("=", 2);
            map.put(pair[0], pair[1]);
        }
        environment.getPropertySources().addFirst(new MapPropertySource("test", map));
        processor.postProcessEnvironment(environment, new SpringApplication());
        return environment;
    }

    @Test
    void defaultsPutTheManagementServerOnFelixHealthPort() {
        StandardEnvironment environment = process();

        assertThat(environment.getProperty("management.server.port")).isEqualTo("9099");
        assertThat(environment.getProperty("management.server.address")).isEqualTo("localhost");
        assertThat(environment.getProperty("management.endpoint.health.group.liveness.include")).isEqualTo("calicoLiveness");
        assertThat(environment.getProperty("management.endpoint.health.group.liveness.additional-path"))
                .isEqualTo("management:/liveness");
        assertThat(environment.getProperty("management.endpoint.health.group.readiness.include")).isEqualTo("calicoReadiness");
        assertThat(environment.getProperty("management.endpoint.health.group.readiness.additional-path"))
                .isEqualTo("management:/readiness");
        assertThat(environment.getProperty("management.endpoint.health.group.readiness.show-details")).isEqualTo("always");
        assertThat(environment.getProperty("management.endpoints.web.exposure.include")).isEqualTo("health,info,prometheus");
        assertThat(environment.getProperty("management.endpoint.health.probes.enabled")).isEqualTo("true");
    }

    @Test
    void healthHostAndPortFollowTheCalicoProperties() {
        StandardEnvironment environment = process("calico.health.port=9098", "calico.health.host=0.0.0.0");

        assertThat(environment.getProperty("management.server.port")).isEqualTo("9098");
        assertThat(environment.getProperty("management.server.address")).isEqualTo("0.0.0.0");
    }

    @Test
    void explicitSettingsWin() {
        StandardEnvironment environment = process(
                "management.server.port=7000", "management.endpoint.health.group.liveness.additional-path=server:/livez");

        assertThat(environment.getProperty("management.server.port")).isEqualTo("7000");
        assertThat(environment.getProperty("management.endpoint.health.group.liveness.additional-path")).isEqualTo("server:/livez");
    }

    @Test
    void healthOnTheMainServerPortUsesServerPaths() {
        StandardEnvironment environment = process("server.port=9099");

        assertThat(environment.getProperty("management.server.port")).isNull();
        assertThat(environment.getProperty("management.server.address")).isNull();
        assertThat(environment.getProperty("management.endpoint.health.group.liveness.additional-path"))
                .isEqualTo("server:/liveness");
        assertThat(environment.getProperty("management.endpoint.health.group.readiness.additional-path"))
                .isEqualTo("server:/readiness");
    }

    @Test
    void randomPortsAreAlwaysSeparateServers() {
        StandardEnvironment environment = process("server.port=0", "calico.health.port=0");

        assertThat(environment.getProperty("management.endpoint.health.group.liveness.additional-path"))
                .isEqualTo("management:/liveness");
    }

    @Test
    void disabledLeavesTheManagementServerAndGroupsAlone() {
        StandardEnvironment environment = process("calico.health.enabled=false");

        assertThat(environment.getProperty("management.server.port")).isNull();
        assertThat(environment.getProperty("management.endpoint.health.group.liveness.include")).isNull();
        assertThat(environment.getProperty("management.endpoints.web.exposure.include")).isEqualTo("health,info,prometheus");
    }

    @Test
    void defaultsHaveTheLowestPrecedenceAndAreNotDuplicated() {
        StandardEnvironment environment = process();
        processor.postProcessEnvironment(environment, new SpringApplication());

        assertThat(environment.getPropertySources().stream().filter(s -> s.getName().equals(CalicoHealthEnvironmentPostProcessor.SOURCE_NAME)))
                .hasSize(1);
        assertThat(environment.getPropertySources().stream().reduce((first, second) -> second).orElseThrow().getName())
                .isEqualTo(CalicoHealthEnvironmentPostProcessor.SOURCE_NAME);
    }
}
