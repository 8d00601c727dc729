package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.testing.NetNs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** {@link RoutingRules} in a namespace of its own, read back with {@code ip rule}. */
class RoutingRulesTest {
    static final String PREFIX = "wg-rrt";

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    @Test
    void addsListsAndDeletesAnInvertedFwmarkRule() {
        try (NetNs ns = NetNs.create(PREFIX)) {
            RoutingRule rule = new RoutingRule(false, 99, 1, 0x100000, 0x100000, true);
            ns.run(() -> {
                try (RoutingRules rules = new RoutingRules()) {
                    rules.add(rule);
                    assertThat(rules.list()).contains(rule);
                }
            });
            assertThat(ns.exec("ip", "rule", "show")).contains("99:\tnot from all fwmark 0x100000/0x100000 lookup 1");
            ns.run(() -> {
                try (RoutingRules rules = new RoutingRules()) {
                    assertThat(rules.delete(rule)).isTrue();
                    assertThat(rules.delete(rule)).isFalse();
                    assertThat(rules.list()).doesNotContain(rule);
                }
            });
            assertThat(ns.exec("ip", "rule", "show")).doesNotContain("lookup 1\n");
        }
    }
}
