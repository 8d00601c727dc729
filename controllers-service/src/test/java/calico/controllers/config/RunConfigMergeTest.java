package calico.controllers.config;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ControllerMode;
import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.model.KubeControllersConfigurationSpec.Controllers;
import calico.api.model.KubeControllersConfigurationSpec.NodeController;
import calico.api.model.KubeControllersConfigurationSpec.Template;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import calico.controllers.node.HostEndpointSettings;
import calico.controllers.node.HostEndpointTemplate;
import java.util.List;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The merge of KubeControllersConfiguration default with Calico's environment variables. */
class RunConfigMergeTest {

    private static final KubeControllersConfigurationSpec DEFAULTS = RunConfigMerge.defaults().spec();

    @Test
    void calicosDefaultsRunEveryControllerWithCalicosPeriods() {
        RunConfigMerge.Merged m = RunConfigMerge.merge(EnvOverrides.none(), DEFAULTS, false);
        RunConfig c = m.config();
        assertThat(c.enabled()).containsExactlyInAnyOrder(Controller.values());
        assertThat(c.logSeverity()).isEqualTo("Info");
        assertThat(c.prometheusPort()).isEqualTo(9094);
        assertThat(c.debugProfilePort()).as("Calico's default: no debug profile port").isZero();
        assertThat(c.compactionPeriod()).isEqualTo(Duration.ofMinutes(10));
        assertThat(c.node()).contains(new RunConfig.NodeConfig(true, HostEndpointSettings.off(), true,
                Optional.of(Duration.ofMinutes(15)),
                Duration.ofMinutes(5)));
        assertThat(c.reconcilerPeriods()).containsEntry(Controller.POLICY, Duration.ofMinutes(5)).hasSize(4);
        assertThat(c.loadBalancer()).contains(KubeControllersConfigurationSpec.AssignIPs.AllServices);
        NodeController running = m.status().runningConfig().controllers().node();
        assertThat(running.syncLabels()).isEqualTo(ControllerMode.Enabled);
        assertThat(running.leakGracePeriod()).isEqualTo("15m0s");
        assertThat(running.hostEndpoint().autoCreate()).isEqualTo(ControllerMode.Disabled);
        assertThat(m.status().environmentVars()).isEmpty();
        assertThat(RunConfigMerge.merge(EnvOverrides.none(), DEFAULTS, false)).as("pure").isEqualTo(m);
    }

    @Test
    void onKubernetesLabelsAreNotSyncedAndCalicoNodesNotDeleted() {
        RunConfigMerge.Merged m = RunConfigMerge.merge(EnvOverrides.none(), DEFAULTS, true);
        assertThat(m.config().node().orElseThrow().syncLabels()).isFalse();
        assertThat(m.config().node().orElseThrow().deleteNodes()).isFalse();
        assertThat(m.status().environmentVars()).containsEntry("DATASTORE_TYPE", "kubernetes");
        assertThat(m.status().runningConfig().controllers().node().syncLabels()).isEqualTo(ControllerMode.Disabled);
    }

    @Test
    void environmentVariablesWinAndAreListedInStatus() {
        EnvOverrides env = new EnvOverrides(Map.of("ENABLED_CONTROLLERS", "node,policy", "LOG_LEVEL", "debug",
                "AUTO_HOST_ENDPOINTS", "enabled", "RECONCILER_PERIOD", "1m"), Optional.of("Debug"),
                Optional.of(Set.of(Controller.NODE, Controller.POLICY)), Optional.of(Duration.ofMinutes(1)), Optional.empty(),
                Optional.empty(), Optional.of(false), Optional.of(true));
        RunConfigMerge.Merged m = RunConfigMerge.merge(env, DEFAULTS, false);
        assertThat(m.config().enabled()).containsExactlyInAnyOrder(Controller.NODE, Controller.POLICY);
        assertThat(m.config().logSeverity()).isEqualTo("Debug");
        assertThat(m.config().reconcilerPeriods()).isEqualTo(Map.of(Controller.POLICY, Duration.ofMinutes(1)));
        assertThat(m.config().node().orElseThrow().hostEndpoints()).isEqualTo(HostEndpointSettings.defaultOnly());
        assertThat(m.config().node().orElseThrow().syncLabels()).isFalse();
        assertThat(m.status().environmentVars()).containsEntry("ENABLED_CONTROLLERS", "node,policy")
                .containsEntry("LOG_LEVEL", "debug");
        assertThat(m.status().runningConfig().logSeverityScreen()).isEqualTo("Debug");
        assertThat(m.status().runningConfig().controllers().namespace()).isNull();
        assertThat(m.status().runningConfig().controllers().policy().reconcilerPeriod()).isEqualTo("1m0s");
    }

    @Test
    void theSpecChoosesControllersAndAZeroGracePeriodSwitchesGcOff() {
        KubeControllersConfigurationSpec spec = new KubeControllersConfigurationSpec("Warning", ControllerMode.Disabled, "0s",
                0, new Controllers(new NodeController(null, ControllerMode.Disabled,
                new KubeControllersConfigurationSpec.AutoHostEndpoint(ControllerMode.Enabled, null, null), "0s"),
                null, null, null, null, null, null), null);
        RunConfig c = RunConfigMerge.merge(EnvOverrides.none(), spec, false).config();
        assertThat(c.enabled()).containsExactly(Controller.NODE);
        assertThat(c.loadBalancer()).isEmpty();
        assertThat(c.healthEnabled()).isFalse();
        assertThat(c.prometheusPort()).isZero();
        assertThat(c.node()).contains(new RunConfig.NodeConfig(false, HostEndpointSettings.defaultOnly(), true, Optional.empty(),
                Duration.ofMinutes(5)));
    }

    @Test
    void valuesWrittenPastValidationFallBackToDefaults() {
        KubeControllersConfigurationSpec spec = new KubeControllersConfigurationSpec("Loud", null, "soon", null,
                new Controllers(new NodeController("never", null, null, "-1m"), null, null, null, null, null, null), null);
        RunConfig c = RunConfigMerge.merge(EnvOverrides.none(), spec, false).config();
        assertThat(c.logSeverity()).isEqualTo("Info");
        assertThat(c.compactionPeriod()).isEqualTo(Duration.ofMinutes(10));
        assertThat(c.node().orElseThrow().leakGracePeriod()).contains(Duration.ofMinutes(15));
        assertThat(c.node().orElseThrow().reconcilerPeriod()).isEqualTo(Duration.ofMinutes(5));
    }

    @Test
    void templatesAreParsedAndOneWrittenPastValidationIsLeftOut() {
        Template good = new Template("int", List.of("10.0.0.0/8"), null, Map.of("k", "v"), "has(a)");
        Template badCidr = new Template("bad", List.of("nope"), null, null, null);
        Template nothing = new Template("none", null, null, null, null);
        Template badPattern = new Template("pat", null, "eth[", null, null);
        KubeControllersConfigurationSpec spec = new KubeControllersConfigurationSpec(null, null, null, null,
                new Controllers(new NodeController(null, null, new KubeControllersConfigurationSpec.AutoHostEndpoint(
                        ControllerMode.Enabled, ControllerMode.Disabled, List.of(good, badCidr, nothing, badPattern)), null),
                        null, null, null, null, null, null), null);
        RunConfigMerge.Merged m = RunConfigMerge.merge(EnvOverrides.none(), spec, true);
        assertThat(m.config().node().orElseThrow().hostEndpoints()).isEqualTo(new HostEndpointSettings(true, false,
                List.of(new HostEndpointTemplate("int", List.of(Cidr.parse("10.0.0.0/8")), Optional.empty(), Map.of("k", "v"),
                        Selector.parse("has(a)")))));
        assertThat(m.status().runningConfig().controllers().node().hostEndpoint().createDefaultHostEndpoint())
                .isEqualTo(ControllerMode.Disabled);
        assertThat(RunConfigMerge.merge(EnvOverrides.none(), spec, true)).as("equal settings are equal: no restart")
                .isEqualTo(m);
    }
}
