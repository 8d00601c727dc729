package calico.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Real {@code ipset restore}/{@code save} inside a namespace of the test's own (ipsets are per namespace). */
class IpsetKernelTest {

    private NetNs ns;
    private Ipset ipset;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(IptablesRestoreKernelTest.installed("ipset"), "ipset not installed");
        ns = NetNs.create("ipset");
        ipset = new Ipset(List.of("ip", "netns", "exec", ns.name()));
    }

    @AfterEach
    void tearDown() {
        if (ns != null) {
            ns.close();
        }
    }

    @Test
    void createAddDelAndList() {
        String v4 = "cali40" + "a".repeat(25);
        ipset.restore(IpsetTransaction.create()
                .createSet(v4, IpsetType.HASH_IP, IpsetFamily.INET, 1048576)
                .add(v4, "10.0.0.1").add(v4, "10.0.0.2").add(v4, "10.0.0.3")
                .createSet("cali60net", IpsetType.HASH_NET, IpsetFamily.INET6, 1024)
                .add("cali60net", "fd00:1::/64")
                .createSet("cali40port", IpsetType.HASH_IP_PORT, IpsetFamily.INET, 1024)
                .add("cali40port", "10.0.0.1,tcp:8080").add("cali40port", "10.0.0.2,udp:53"));
        ipset.restore(IpsetTransaction.create().del(v4, "10.0.0.2").del(v4, "10.9.9.9")
                // -exist makes a repeated create/add harmless
                .createSet(v4, IpsetType.HASH_IP, IpsetFamily.INET, 1048576).add(v4, "10.0.0.1"));

        var sets = ipset.list();
        assertThat(sets).containsOnlyKeys(v4, "cali60net", "cali40port");
        assertThat(sets.get(v4).members()).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.3");
        assertThat(sets.get("cali60net")).isEqualTo(new IpsetInfo("cali60net", IpsetType.HASH_NET, IpsetFamily.INET6, Set.of("fd00:1::/64")));
        assertThat(sets.get("cali40port").members()).containsExactlyInAnyOrder("10.0.0.1,tcp:8080", "10.0.0.2,udp:53");
        assertThat(ipset.list("cali40port").type()).isEqualTo(IpsetType.HASH_IP_PORT);
        assertThat(ipset.list("cali40none")).isNull();
    }

    @Test
    void replaceSwapsInExactlyTheNewMembersAndLeavesNoTemporarySet() {
        ipset.restore(IpsetTransaction.create()
                .replace("cali40s", IpsetType.HASH_NET, IpsetFamily.INET, 1024, List.of("10.0.0.0/24", "10.1.0.0/16")));
        assertThat(ipset.list("cali40s").members()).containsExactlyInAnyOrder("10.0.0.0/24", "10.1.0.0/16");

        ipset.restore(IpsetTransaction.create()
                .replace("cali40s", IpsetType.HASH_NET, IpsetFamily.INET, 1024, List.of("10.2.0.0/16")));
        assertThat(ipset.list("cali40s").members()).containsExactly("10.2.0.0/16");
        assertThat(ipset.list()).containsOnlyKeys("cali40s");

        // replacing with nothing empties the set but keeps it (rules may still reference it)
        ipset.restore(IpsetTransaction.create().replace("cali40s", IpsetType.HASH_NET, IpsetFamily.INET, 1024, List.of()));
        assertThat(ipset.list("cali40s").members()).isEmpty();
    }

    @Test
    void flushAndDestroy() {
        ipset.restore(IpsetTransaction.create().createSet("cali40f", IpsetType.HASH_IP, IpsetFamily.INET, 16).add("cali40f", "10.0.0.9"));
        ipset.restore(IpsetTransaction.create().flush("cali40f"));
        assertThat(ipset.list("cali40f").members()).isEmpty();
        ipset.restore(IpsetTransaction.create().destroy("cali40f"));
        assertThat(ipset.list()).isEmpty();
    }

    @Test
    void aBadMemberFailsNamingTheLine() {
        IpsetTransaction tx = IpsetTransaction.create()
                .createSet("cali40bad", IpsetType.HASH_IP, IpsetFamily.INET, 16)
                .add("cali40bad", "10.0.0.1")
                .add("cali40bad", "not-an-ip");
        assertThatThrownBy(() -> ipset.restore(tx))
                .isInstanceOfSatisfying(IptablesException.class, e -> {
                    assertThat(e.lineNumber()).isEqualTo(3);
                    assertThat(e.line()).isEqualTo("add cali40bad not-an-ip -exist");
                    assertThat(e.getMessage()).contains("failing input line 3");
                });
        // unlike iptables-restore, ipset restore is not all-or-nothing: lines before the bad one
        // may have been applied (here the create), so a failed ipset transaction needs a resync
        assertThat(ipset.list("cali40bad")).isNotNull();
    }

    @Test
    void aSetUsedByARuleCannotBeDestroyedButCanBeReplaced() {
        assumeTrue(IptablesRestoreKernelTest.installed("iptables-nft-restore"));
        ipset.restore(IpsetTransaction.create().createSet("cali40used", IpsetType.HASH_IP, IpsetFamily.INET, 16).add("cali40used", "10.0.0.1"));
        IptablesRestore r = new IptablesRestore(IptablesBackend.NFT, XtablesLockSettings.defaults(), List.of("ip", "netns", "exec", ns.name()));
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.FILTER).declareChain("cali-s")
                .appendRule("cali-s", Rule.of("-m", "set", "--match-set", "cali40used", "src", "-j", "DROP")));
        assertThatThrownBy(() -> ipset.restore(IpsetTransaction.create().destroy("cali40used"))).isInstanceOf(IptablesException.class);
        ipset.restore(IpsetTransaction.create().replace("cali40used", IpsetType.HASH_IP, IpsetFamily.INET, 16, List.of("10.0.0.2")));
        assertThat(ipset.list("cali40used").members()).containsExactly("10.0.0.2");
        assertThat(r.save(IpVersion.V4, Table.FILTER).rules("cali-s")).containsExactly("-m set --match-set cali40used src -j DROP");
    }

    /** Every ipset command is reported once, with its input lines and whether it worked, and its fork/exec time. */
    @Test
    void everyCommandIsReportedToToolCalls() {
        java.util.List<String> heard = new java.util.ArrayList<>();
        Ipset counted = new Ipset(List.of("ip", "netns", "exec", ns.name()), new calico.dataplane.calls.ToolCalls() {
            @Override
            public void started(long micros) {
                heard.add("started");
            }

            @Override
            public void ipset(int lines, boolean ok) {
                heard.add("ipset " + lines + " " + ok);
            }
        });
        counted.restore(IpsetTransaction.create().replace("cali40c", IpsetType.HASH_NET, IpsetFamily.INET, 1024,
                List.of("10.0.0.0/24")));
        counted.list();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> counted.restore(IpsetTransaction.create()
                .add("cali40missing", "10.0.0.1"))).isInstanceOf(IptablesException.class);
        org.assertj.core.api.Assertions.assertThat(heard).hasSize(6).startsWith("started")
                .contains("ipset 0 true", "ipset 1 false").anyMatch(h -> h.matches("ipset [2-9]\\d* true"));
    }
}
