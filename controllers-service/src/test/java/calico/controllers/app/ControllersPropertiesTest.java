package calico.controllers.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.controllers.config.Controller;
import calico.controllers.config.EnvOverrides;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Calico's variables reach typed overrides; a bad value names its variable. */
class ControllersPropertiesTest {

    private static ControllersProperties props(String log, String enabled, String period, String health, String sync,
                                               String hep) {
        return new ControllersProperties(log, enabled, period, "", health, sync, hep, null, null);
    }

    @Test
    void unsetVariablesOverrideNothing() {
        assertThat(props("", "", "", "", "", "").toOverrides()).isEqualTo(EnvOverrides.none());
    }

    @Test
    void calicosSpellingsAreRead() {
        EnvOverrides o = props("warn", "node, profile", "90s", "False", "1", "Enabled").toOverrides();
        assertThat(o.logLevel()).contains("Warning");
        assertThat(o.enabledControllers().orElseThrow()).containsExactlyInAnyOrder(Controller.NODE, Controller.NAMESPACE);
        assertThat(o.reconcilerPeriod()).contains(Duration.ofSeconds(90));
        assertThat(o.healthEnabled()).contains(false);
        assertThat(o.syncNodeLabels()).contains(true);
        assertThat(o.autoHostEndpoints()).contains(true);
        assertThat(o.given()).containsEntry("ENABLED_CONTROLLERS", "node, profile").containsEntry("LOG_LEVEL", "warn");
    }

    @Test
    void badValuesNameTheirVariable() {
        assertThatThrownBy(() -> props("loud", "", "", "", "", "")).hasMessageContaining("LOG_LEVEL").hasMessageContaining("loud");
        assertThatThrownBy(() -> props("", "node,ipam", "", "", "", "")).hasMessageContaining("ENABLED_CONTROLLERS")
                .hasMessageContaining("\"ipam\"");
        assertThatThrownBy(() -> props("", "", "5 minutes", "", "", "")).hasMessageContaining("RECONCILER_PERIOD");
        assertThatThrownBy(() -> props("", "", "", "yes", "", "")).hasMessageContaining("HEALTH_ENABLED");
        assertThatThrownBy(() -> props("", "", "", "", "", "on")).hasMessageContaining("AUTO_HOST_ENDPOINTS");
        assertThatThrownBy(() -> new ControllersProperties("", "", "", "", "", "", "",
                new ControllersProperties.LeaderElection(true, "l", "ns", "", Duration.ofSeconds(5), Duration.ofSeconds(7),
                        Duration.ofSeconds(2)), null)).hasMessageContaining("controllers.leader-election");
        assertThatThrownBy(() -> new ControllersProperties("", "", "", "", "", "", "", null, Duration.ZERO))
                .hasMessageContaining("KUBE_CONTROLLERS_LOOP_STUCK_AFTER");
    }

    @Test
    void theDatastoreIsEtcdOrKubernetes() {
        assertThatThrownBy(() -> new calico.libcalico.datastore.config.DatastoreProperties(ControllersConfiguration.DATASTORE,
                "memory", "", "", "", "", "", "")).hasMessageContaining("controllers.datastore-type (DATASTORE_TYPE)")
                .hasMessageContaining("\"memory\" is not one of etcdv3, kubernetes");
    }
}
