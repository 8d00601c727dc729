package calico.libcalico.bird;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.StringReader;
import org.junit.jupiter.api.Test;

/** BIRD 2.0.12's {@code show status} and {@code show route all} replies as they arrive on the socket. */
class StatusAndRoutesParserTest {

    private static BirdReply wire(String text) throws Exception {
        return BirdControl.read(new BufferedReader(new StringReader(text)));
    }

    @Test
    void readsStatus() throws Exception {
        BirdStatus s = BirdStatus.parse(wire("""
                1000-BIRD 2.0.12
                1011-Router ID is 10.9.9.1
                 Hostname is vm
                 Current server time is 2026-12-06 04:29:53.956
                 Last reboot on 2026-12-06 04:29:52.022
                 Last reconfiguration on 2026-12-06 04:29:52.500
                0013 Daemon is up and running
                """));
        assertThat(s).isEqualTo(new BirdStatus("2.0.12", "10.9.9.1", "2026-12-06 04:29:52.022",
                "2026-12-06 04:29:52.500", true));
        assertThat(BirdStatus.parse(wire("1000-BIRD 2.0.12\n0014 Shutdown in progress\n")).up()).isFalse();
    }

    @Test
    void readsRoutesOfBothTablesWithTheirNextHops() throws Exception {
        BirdReply reply = wire("""
                1007-Table master4:
                 10.9.9.0/24          unicast [direct1 04:30:13.317] * (240)
                 \tdev ns-p1
                1008-\tType: device univ
                1007-10.60.0.0/26         unicast [Mesh_10_9_9_2 04:30:04.340 from 10.9.9.2] * (100) [i]
                 \tvia 10.9.9.2 on ns-p1
                1008-\tType: BGP univ
                1012-\tBGP.origin: IGP
                 \tBGP.next_hop: 10.9.9.2
                1007-                     unicast [Global_10_9_9_3 04:30:05.000] (100) [i]
                 \tvia 10.9.9.3 on ns-p1
                1007-10.50.0.0/26         blackhole [s4 04:29:52.022] * (200)
                1008-\tType: static univ
                1007-
                 Table master6:
                 fd60::/122           unicast [Mesh_fd09__2 04:30:08.826] * (100) [i]
                 \tvia fd09::2 on ns-p1
                0000\s
                """);
        assertThat(RoutesParser.parse(reply)).containsExactly(
                new BirdRoute("master4", "10.9.9.0/24", "unicast", "direct1", true, null, "ns-p1"),
                new BirdRoute("master4", "10.60.0.0/26", "unicast", "Mesh_10_9_9_2", true, "10.9.9.2", "ns-p1"),
                new BirdRoute("master4", "10.60.0.0/26", "unicast", "Global_10_9_9_3", false, "10.9.9.3", "ns-p1"),
                new BirdRoute("master4", "10.50.0.0/26", "blackhole", "s4", true, null, null),
                new BirdRoute("master6", "fd60::/122", "unicast", "Mesh_fd09__2", true, "fd09::2", "ns-p1"));
    }

    @Test
    void peerTypeAndAddressFromTheProtocol() {
        BirdProtocol mesh6 = new BirdProtocol("Mesh_fd99__2", "BGP", "up", "04:30:08.826", "Established", null, null, null);
        BirdProtocol global = new BirdProtocol("Global_10_0_0_254_port_1790", "BGP", "start", "x", "Active", "Active",
                null, null);
        assertThat(PeerType.of(mesh6)).contains(PeerType.NODE_MESH);
        assertThat(PeerType.address(mesh6)).isEqualTo("fd99::2");
        assertThat(PeerType.address(global)).isEqualTo("10.0.0.254");
        assertThat(PeerType.of(new BirdProtocol("Local_Workload_10_1_1_1", "BGP", "up", "", "", null, null, null))).isEmpty();
        assertThat(PeerType.of(new BirdProtocol("Mesh_x", "Static", "up", "", "", null, null, null))).isEmpty();
        assertThat(NodeStatusReader.sessionState(global)).isEqualTo("Active");
        assertThat(NodeStatusReader.sessionState(new BirdProtocol("Node_10_0_0_1", "BGP", "down", "", "", null, null, null)))
                .isEqualTo("Idle");
    }
}
