package calico.felix.dataplane.mtu;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.netlink.Link;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which encapsulations count, and when the manager detects and writes (links given as a list). */
class MtuManagerTest {

    @TempDir
    Path dir;

    private static IpPoolUpdate pool(String cidr, String ipip, String vxlan, boolean disabled) {
        return new IpPoolUpdate("p-" + cidr, cidr, false, ipip, vxlan, disabled);
    }

    private static FelixSettings settings(Map<String, String> values) {
        return FelixSettings.from(values);
    }

    @Test
    void encapsulationsComeFromSettingsElseFromEnabledPoolsPerFamily() {
        assertThat(MtuManager.enabled(settings(Map.of()), List.of())).isEqualTo(Mtus.Enabled.NONE);
        assertThat(MtuManager.enabled(settings(Map.of()), List.of(pool("10.1.0.0/16", "Always", "Never", false),
                pool("10.2.0.0/16", "Never", "CrossSubnet", false))))
                .isEqualTo(new Mtus.Enabled(true, true, false, false, false));
        assertThat(MtuManager.enabled(settings(Map.of()), List.of(pool("fd00:1::/64", "Never", "Always", false))))
                .as("an IPv6 VXLAN pool turns on the IPv6 device only")
                .isEqualTo(new Mtus.Enabled(false, false, true, false, false));
        assertThat(MtuManager.enabled(settings(Map.of()), List.of(pool("10.1.0.0/16", "Always", "Always", true))))
                .as("a disabled pool turns nothing on").isEqualTo(Mtus.Enabled.NONE);
        assertThat(MtuManager.enabled(settings(Map.of("vxlanEnabled", "false", "ipipEnabled", "false")),
                List.of(pool("10.1.0.0/16", "Always", "Never", false), pool("fd00:1::/64", "Never", "Always", false))))
                .as("explicit false wins").isEqualTo(Mtus.Enabled.NONE);
        assertThat(MtuManager.enabled(settings(Map.of("vxlanEnabled", "true", "wireguardEnabled", "true",
                "wireguardEnabledV6", "true")), List.of()))
                .isEqualTo(new Mtus.Enabled(false, true, false, true, true));
    }

    @Test
    void detectsOnceUntilLinksChangeAndWritesOnlyWhenThePodMtuChanges() throws Exception {
        List<Link> links = new ArrayList<>(List.of(new Link(2, "eth0", 1500, true, Optional.empty(), Optional.empty())));
        int[] listings = {0};
        Path file = dir.resolve("mtu");
        MtuManager m = new MtuManager(() -> {
            listings[0]++;
            return List.copyOf(links);
        }, Optional.of(new MtuFile(file)));
        DataplaneModel model = new DataplaneModel();
        assertThat(m.update(model)).as("no configuration yet").isEmpty();
        assertThat(file).doesNotExist();

        model.apply(new DataplaneUpdate.ConfigUpdate(settings(Map.of("wireguardEnabled", "true"))));
        assertThat(m.update(model).orElseThrow().pod()).isEqualTo(1440);
        assertThat(Files.readString(file)).isEqualTo("1440");
        m.update(model);
        assertThat(listings[0]).as("no link change: no second listing").isEqualTo(1);

        links.set(0, new Link(2, "eth0", 9000, true, Optional.empty(), Optional.empty()));
        Files.writeString(file, "stale");
        m.update(model);
        assertThat(Files.readString(file)).as("links not announced as changed: not re-detected").isEqualTo("stale");
        m.linksChanged();
        assertThat(m.update(model).orElseThrow().pod()).isEqualTo(8940);
        assertThat(Files.readString(file)).isEqualTo("8940");
        assertThat(m.current().orElseThrow().host()).isEqualTo(9000);

        model.apply(new DataplaneUpdate.ConfigUpdate(settings(Map.of("wireguardEnabled", "true",
                "wireguardMTU", "1280", "wireguardEnabledV6", "true"))));
        assertThat(m.update(model).orElseThrow()).isEqualTo(new Mtus(9000, 8980, 8950, 8930, 1280, 8920, 1280));
        assertThat(Files.readString(file)).isEqualTo("1280");
        assertThat(m.writeError()).isEmpty();
    }

    @Test
    void aFileThatCannotBeWrittenIsReportedAndRetried() throws Exception {
        Path blocker = dir.resolve("not-a-dir");
        Files.writeString(blocker, "a file where the directory should be");
        Path file = blocker.resolve("mtu");
        MtuManager m = new MtuManager(() -> List.of(new Link(2, "eth0", 1500, true, Optional.empty(),
                Optional.empty())), Optional.of(new MtuFile(file)));
        DataplaneModel model = new DataplaneModel();
        model.apply(new DataplaneUpdate.ConfigUpdate(settings(Map.of())));
        assertThat(m.update(model).orElseThrow().pod()).as("computed all the same").isEqualTo(1500);
        assertThat(m.writeError()).hasValueSatisfying(e -> assertThat(e).contains(file.toString()));
        Files.delete(blocker);
        m.update(model);
        assertThat(m.writeError()).isEmpty();
        assertThat(Files.readString(file)).isEqualTo("1500");
    }
}
