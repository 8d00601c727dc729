package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.XtablesLockSettings;
import java.nio.file.Path;
import java.time.Duration;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The backend table of the design note, and that Auto detection runs only when it decides. */
class BackendChoiceTest {

    private final AtomicInteger detections = new AtomicInteger();
    private final Supplier<IptablesBackend> detect = () -> {
        detections.incrementAndGet();
        return IptablesBackend.LEGACY;
    };

    @Test
    void nftablesModeAndIptablesBackendPickTheDriver() {
        assertThat(choose(Map.of("nftablesMode", "Enabled", "iptablesBackend", "Legacy")))
                .isEqualTo(new BackendChoice.Nftables());
        assertThat(choose(Map.of("nftablesMode", "enabled"))).isEqualTo(new BackendChoice.Nftables());
        assertThat(choose(Map.of("nftablesMode", "Disabled", "iptablesBackend", "NFT")))
                .isEqualTo(new BackendChoice.Iptables(IptablesBackend.NFT));
        assertThat(choose(Map.of("nftablesMode", "Auto", "iptablesBackend", "legacy")))
                .isEqualTo(new BackendChoice.Iptables(IptablesBackend.LEGACY));
        assertThat(detections).as("explicit backends are not detected").hasValue(0);

        // Auto (and unset) nftablesMode means iptables; Auto iptablesBackend is detected.
        assertThat(choose(Map.of())).isEqualTo(new BackendChoice.Iptables(IptablesBackend.LEGACY));
        assertThat(choose(Map.of("nftablesMode", "Auto", "iptablesBackend", "Auto")))
                .isEqualTo(new BackendChoice.Iptables(IptablesBackend.LEGACY));
        assertThat(detections).hasValue(2);
    }

    @Test
    void bpfEnabledPicksTheBpfDriverOverEverythingElse() {
        assertThat(choose(Map.of("bpfEnabled", "true", "nftablesMode", "Enabled", "iptablesBackend", "Legacy")))
                .isEqualTo(new BackendChoice.Bpf());
        assertThat(choose(Map.of("bpfEnabled", "false", "nftablesMode", "Enabled"))).isEqualTo(new BackendChoice.Nftables());
        assertThat(new BackendChoice.Bpf().driverName()).isEqualTo("bpf");
        assertThat(BackendChoice.Inputs.of(FelixSettings.from(Map.of("bpfEnabled", "true"))))
                .isNotEqualTo(BackendChoice.Inputs.of(FelixSettings.from(Map.of())));
    }

    @Test
    void xtablesLockSettingsComeFromFelixConfiguration() {
        BackendChoice c = choose(Map.of("iptablesBackend", "NFT", "iptablesLockFilePath", "/run/other.lock",
                "iptablesLockTimeout", "5s", "iptablesLockProbeInterval", "20ms"));
        assertThat(c).isEqualTo(new BackendChoice.Iptables(IptablesBackend.NFT, new XtablesLockSettings(
                Path.of("/run/other.lock"), Duration.ofSeconds(5), Duration.ofMillis(20))));
        assertThat(choose(Map.of("iptablesBackend", "NFT")))
                .isEqualTo(new BackendChoice.Iptables(IptablesBackend.NFT, XtablesLockSettings.defaults()));
        // A lock change is an input change (the driver restarts with the new lock); a zero probe keeps the default.
        assertThat(BackendChoice.Inputs.of(FelixSettings.from(Map.of("iptablesLockTimeout", "5s"))))
                .isNotEqualTo(BackendChoice.Inputs.of(FelixSettings.from(Map.of())));
        assertThat(BackendChoice.Inputs.of(FelixSettings.from(Map.of("iptablesLockProbeInterval", "0s"))).lock().probeInterval())
                .isEqualTo(XtablesLockSettings.DEFAULT_PROBE_INTERVAL);
    }

    @Test
    void onlyModeAndLockFieldsAreInputsAndDriverNamesMatchTheDrivers() {
        Map<String, String> a = new HashMap<>(Map.of("nftablesMode", "Disabled", "iptablesBackend", "NFT"));
        Map<String, String> b = new HashMap<>(a);
        b.put("logSeverityScreen", "Debug");
        b.put("iptablesBackend", "nft");
        assertThat(BackendChoice.Inputs.of(FelixSettings.from(b))).isEqualTo(BackendChoice.Inputs.of(FelixSettings.from(a)));
        assertThat(BackendChoice.Inputs.of(FelixSettings.from(Map.of()))).isEqualTo(BackendChoice.Inputs.of(FelixSettings.from(
                Map.of("nftablesMode", "Auto", "iptablesBackend", " "))));
        assertThat(new BackendChoice.Iptables(IptablesBackend.NFT).driverName()).isEqualTo("iptables-nft");
        assertThat(new BackendChoice.Iptables(IptablesBackend.LEGACY).driverName()).isEqualTo("iptables-legacy");
        assertThat(new BackendChoice.Nftables().driverName()).isEqualTo("nftables");
    }

    @Test
    void theStandardFactoryMakesTheChosenDriver() {
        KernelPolicyDrivers drivers = new KernelPolicyDrivers(List.of());
        assertThat(drivers.create(new BackendChoice.Iptables(IptablesBackend.NFT), new DataplaneModel()).name()).isEqualTo("iptables-nft");
        assertThat(drivers.create(new BackendChoice.Nftables(), new DataplaneModel()).name()).isEqualTo("nftables");
        assertThat(drivers.create(new BackendChoice.Bpf(), new DataplaneModel()).name()).as("nothing loaded yet")
                .isEqualTo("bpf");
    }

    private BackendChoice choose(Map<String, String> config) {
        return BackendChoice.resolve(BackendChoice.Inputs.of(FelixSettings.from(config)), detect);
    }
}
