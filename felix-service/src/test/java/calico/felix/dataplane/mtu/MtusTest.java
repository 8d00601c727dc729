package calico.felix.dataplane.mtu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.netlink.Link;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.mtu.Mtus.Configured;
import calico.felix.dataplane.mtu.Mtus.Enabled;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The MTU calculation and the host MTU rule, as table cases. */
class MtusTest {

    /**
     * host, enabled (ipip vxlan vxlanV6 wg wgV6 as 0/1 flags), configured (same order), then the
     * expected ipip, vxlan, vxlanV6, wireguard, wireguardV6 and pod MTUs.
     */
    @ParameterizedTest(name = "host {0}, on {1}, configured {2} → pod {8}")
    @CsvSource({
            "1500, 00000, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1500",
            "1500, 01000, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1450",
            "1500, 10000, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1480",
            "1500, 00010, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1440",
            "1500, 00001, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1420",
            "1500, 00100, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1430",
            "1500, 01010, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1440",
            "1500, 11111, 0/0/0/0/0,          1480, 1450, 1430, 1440, 1420, 1420",
            "9001, 01000, 0/0/0/0/0,          8981, 8951, 8931, 8941, 8921, 8951",
            "1460, 10000, 0/0/0/0/0,          1440, 1410, 1390, 1400, 1380, 1440",
            "1500, 01000, 0/1400/0/0/0,       1480, 1400, 1430, 1440, 1420, 1400",
            "1500, 00000, 0/1400/0/0/0,       1480, 1400, 1430, 1440, 1420, 1500",
            "1500, 01010, 0/0/0/1300/0,       1480, 1450, 1430, 1300, 1420, 1300",
            "1500, 01000, 0/9000/0/0/0,       1480, 9000, 1430, 1440, 1420, 9000",
            "1500, 10100, 1200/0/1100/0/1000, 1200, 1450, 1100, 1440, 1000, 1100",
    })
    void explicitMtusWinOverheadsApplyAndThePodGetsTheSmallestEnabled(int host, String on, String configured,
            int ipip, int vxlan, int vxlanV6, int wg, int wgV6, int pod) {
        int[] c = java.util.Arrays.stream(configured.split("/")).mapToInt(Integer::parseInt).toArray();
        Enabled enabled = new Enabled(on.charAt(0) == '1', on.charAt(1) == '1', on.charAt(2) == '1',
                on.charAt(3) == '1', on.charAt(4) == '1');
        Mtus m = Mtus.of(host, enabled, new Configured(c[0], c[1], c[2], c[3], c[4]));
        assertThat(m).isEqualTo(new Mtus(host, ipip, vxlan, vxlanV6, wg, wgV6, pod));
    }

    @Test
    void badInputIsRefusedNamingIt() {
        assertThatThrownBy(() -> new Configured(0, -1, 0, 0, 0)).hasMessageContaining("configured MTU");
        assertThatThrownBy(() -> Mtus.of(0, Enabled.NONE, Configured.NONE)).hasMessageContaining("host MTU");
    }

    private static Link link(String name, int mtu, boolean up) {
        return new Link(1, name, mtu, up, Optional.of("veth"), Optional.empty());
    }

    @Test
    void hostMtuIsTheSmallestUpLinkMatchingThePattern() {
        Pattern calico = Pattern.compile(FelixSettings.defaults().mtuIfacePattern());
        List<Link> links = List.of(link("lo", 65536, true), link("eth0", 9000, true), link("ens3", 1500, true),
                link("eth1", 1400, false), link("cali1234", 1300, true), link("docker0", 1200, true),
                link("enp0s3", 8000, true), link("vxlan.calico", 1450, true));
        assertThat(HostMtu.detect(links, calico)).as("eth0, ens3, enp0s3 count; down eth1, cali, docker0, vxlan not")
                .isEqualTo(1500);
        assertThat(HostMtu.detect(List.of(link("lo", 65536, true), link("cali1", 1500, true)), calico))
                .as("nothing matches: Calico's fallback").isEqualTo(HostMtu.FALLBACK);
        assertThat(HostMtu.detect(links, Pattern.compile("^docker"))).isEqualTo(1200);
        assertThat(HostMtu.detect(links, Pattern.compile("eth"))).as("searched, not anchored")
                .isEqualTo(9000);
    }
}
