package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The topology on the real kernel (root): namespaces named {@code nd-<random>-...}, always deleted. */
class TopologyTest {

    private final String prefix = TestNamespaces.uniquePrefix();

    @TempDir
    Path records;

    @AfterEach
    void deleteEverythingOfThisTest() {
        TestNamespaces.deleteAll(prefix);
    }

    private List<String> namespaces() {
        return TestNamespaces.list(prefix);
    }

    /** One ICMP echo over a raw socket (this machine has no ping binary); true when the reply came within 2 s. */
    private static final String PING = """
            import socket, struct, sys
            def csum(b):
                s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
                s = (s >> 16) + (s & 0xffff); s += s >> 16
                return ~s & 0xffff
            body = struct.pack('!BBHHH', 8, 0, 0, 0x4e44, 1) + b'launcher'
            pkt = body[:2] + struct.pack('!H', csum(body)) + body[4:]
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            s.settimeout(2)
            s.sendto(pkt, (sys.argv[1], 0))
            while True:
                data, addr = s.recvfrom(2048)
                icmp = data[(data[0] & 0x0f) * 4:]
                if addr[0] == sys.argv[1] and icmp[0] == 0 and icmp[4:6] == b'\\x4e\\x44':
                    sys.exit(0)
            """;

    private static boolean ping(String fromNs, String address) {
        return Command.exec(List.of("ip", "netns", "exec", fromNs, "python3", "-c", PING, address)).ok();
    }

    private static String ifindex(String ns) {
        return Command.run("ip", "-n", ns, "-o", "link", "show", Node.UPLINK).split(":")[0];
    }

    @Test
    void createMakesUnderlayAndNodesThatReachEachOtherAndDeleteLeavesNothing() {
        Topology t = new Topology(prefix, 3, Topology.Underlay.DEFAULT, records);

        List<String> made = t.create();

        assertThat(made).containsExactly(prefix + "underlay", prefix + "node-1", prefix + "node-2", prefix + "node-3");
        assertThat(namespaces()).containsExactly(prefix + "node-1", prefix + "node-2", prefix + "node-3", prefix + "underlay");
        assertThat(records.toFile().list()).containsExactlyInAnyOrder(made.toArray(String[]::new));
        Node n1 = t.nodes().get(0);
        assertThat(n1.name()).isEqualTo("node-1");
        assertThat(Command.run("ip", "-n", n1.namespace(), "-o", "-4", "addr", "show", "dev", "eth0")).contains("172.31.255.1/24");
        assertThat(Command.run("ip", "-n", n1.namespace(), "route", "show", "default")).contains("via 172.31.255.254 dev eth0");
        assertThat(Command.run("ip", "netns", "exec", n1.namespace(), "sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo("1");
        assertThat(ping(prefix + "node-1", "172.31.255.3")).isTrue();
        assertThat(ping(prefix + "node-3", "172.31.255.2")).isTrue();
        // Nothing in this machine's own namespace: the bridge and the node ports live in the underlay.
        assertThat(Command.run("ip", "-o", "link", "show")).doesNotContain(prefix);

        assertThat(t.delete()).containsExactlyInAnyOrder(made.toArray(String[]::new));
        assertThat(namespaces()).isEmpty();
        assertThat(records.toFile().list()).isEmpty();
        assertThat(t.delete()).isEmpty();
    }

    @Test
    void aSecondCreateChangesNothingAndAHalfMadeTopologyIsCompleted() {
        Topology t = new Topology(prefix, 2, Topology.Underlay.DEFAULT, records);
        t.create();
        String before1 = ifindex(prefix + "node-1");
        String before2 = ifindex(prefix + "node-2");

        assertThat(t.create()).isEmpty();
        assertThat(ifindex(prefix + "node-1")).isEqualTo(before1);
        assertThat(ifindex(prefix + "node-2")).isEqualTo(before2);
        assertThat(namespaces()).hasSize(3);

        // node-2 loses its uplink (the pair goes with it): the next create puts it back.
        Command.run("ip", "-n", prefix + "node-2", "link", "del", Node.UPLINK);
        assertThat(ping(prefix + "node-1", "172.31.255.2")).isFalse();
        assertThat(t.create()).isEmpty();
        assertThat(ping(prefix + "node-1", "172.31.255.2")).isTrue();
        assertThat(ifindex(prefix + "node-1")).isEqualTo(before1);

        t.delete();
        assertThat(namespaces()).isEmpty();
    }

    @Test
    void aNamespaceThatIsNotRecordedIsNeitherAdoptedNorDeleted() {
        Command.run("ip", "netns", "add", prefix + "node-1");
        Topology t = new Topology(prefix, 1, Topology.Underlay.DEFAULT, records);

        assertThatThrownBy(t::create).hasMessageContaining("network namespace " + prefix + "node-1 exists but was not created here");
        t.delete();

        assertThat(namespaces()).containsExactly(prefix + "node-1");
        assertThat(Files.exists(records.resolve(prefix + "underlay"))).isFalse();
    }

    @Test
    void badSettingsAreRefusedNamingTheOption() {
        assertThatThrownBy(() -> new Topology(prefix, 0, Topology.Underlay.DEFAULT, records)).hasMessageContaining("--nodes");
        assertThatThrownBy(() -> new Topology("Bad_", 1, Topology.Underlay.DEFAULT, records)).hasMessageContaining("--prefix");
        assertThatThrownBy(() -> new Topology.Underlay("10.0", 24)).hasMessageContaining("--underlay");
    }
}
