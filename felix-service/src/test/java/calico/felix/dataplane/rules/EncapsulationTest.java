package calico.felix.dataplane.rules;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.FelixSettings;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one decision of which encapsulations are on (routes, MTUs and input rules all read it). */
class EncapsulationTest {

    private static IpPoolUpdate pool(String cidr, String ipip, String vxlan, boolean disabled) {
        return new IpPoolUpdate("p-" + cidr, cidr, false, ipip, vxlan, disabled);
    }

    private static Encapsulation of(Map<String, String> settings, IpPoolUpdate... pools) {
        return Encapsulation.of(FelixSettings.from(settings), List.of(pools));
    }

    @Test
    void poolsDecidePerFamilyWhenNothingIsSet() {
        assertThat(of(Map.of())).isEqualTo(Encapsulation.NONE);
        assertThat(of(Map.of(), pool("10.1.0.0/16", "Never", "Never", false))).isEqualTo(Encapsulation.NONE);
        assertThat(of(Map.of(), pool("10.1.0.0/16", "Always", "Never", false), pool("10.2.0.0/16", "Never", "CrossSubnet", false)))
                .isEqualTo(new Encapsulation(true, true, false));
        assertThat(of(Map.of(), pool("fd00:1::/64", "Never", "Always", false)))
                .as("an IPv6 VXLAN pool turns on the IPv6 device only").isEqualTo(new Encapsulation(false, false, true));
        assertThat(of(Map.of(), pool("fd00:1::/64", "Always", "Never", false)))
                .as("IPIP is IPv4 only").isEqualTo(Encapsulation.NONE);
        assertThat(of(Map.of(), pool("10.1.0.0/16", "Always", "Always", true)))
                .as("a disabled pool still counts (Calico)").isEqualTo(new Encapsulation(true, true, false));
        assertThat(of(Map.of(), pool("10.1.0.0/16", null, "", false))).as("an unset mode is Never").isEqualTo(Encapsulation.NONE);
    }

    @Test
    void explicitSettingsWin() {
        IpPoolUpdate v4 = pool("10.1.0.0/16", "Always", "Always", false);
        IpPoolUpdate v6 = pool("fd00:1::/64", "Never", "Always", false);
        assertThat(of(Map.of("vxlanEnabled", "false", "ipipEnabled", "false"), v4, v6))
                .as("explicit false turns both VXLAN devices off").isEqualTo(Encapsulation.NONE);
        assertThat(of(Map.of("vxlanEnabled", "true", "ipipEnabled", "true")))
                .as("explicit true without pools: the IPv4 devices").isEqualTo(new Encapsulation(true, true, false));
        assertThat(of(Map.of("vxlanEnabled", "true"), v6)).isEqualTo(new Encapsulation(false, true, true));
        assertThat(of(Map.of("ipipEnabled", "false"), v4)).isEqualTo(new Encapsulation(false, true, false));
    }
}
