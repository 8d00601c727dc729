package calico.dataplane.iptables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Real restores inside a namespace of the test's own, for each backend installed here. */
class IptablesRestoreKernelTest {

    private NetNs ns;

    @BeforeEach
    void setUp() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("ipt");
    }

    @AfterEach
    void tearDown() {
        if (ns != null) {
            ns.close();
        }
    }

    private IptablesRestore restore(IptablesBackend backend) {
        assumeTrue(installed(backend.restoreBinary(IpVersion.V4)), backend + " tools not installed");
        return new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix());
    }

    private List<String> prefix() {
        return List.of("ip", "netns", "exec", ns.name());
    }

    static boolean installed(String binary) {
        return Files.isExecutable(Path.of("/usr/sbin", binary)) || Files.isExecutable(Path.of("/sbin", binary));
    }

    private static String cli(IptablesBackend b, IpVersion v) {
        return v.toolPrefix() + "-" + (b == IptablesBackend.NFT ? "nft" : "legacy");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void createdChainsAndRulesAppearInSave(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.FILTER)
                .declareChain("cali-FORWARD")
                .declareChain("cali-from-wl")
                .appendRule("cali-FORWARD", Rule.of("-j", "cali-from-wl").withComment("cali:abc def"))
                .appendRule("cali-from-wl", Rule.of("-p", "tcp", "--dport", "8080", "-j", "DROP"))
                .insertRule("FORWARD", Rule.of("-j", "cali-FORWARD")));
        SavedTable t = r.save(IpVersion.V4, Table.FILTER);
        assertThat(t.chains()).contains("FORWARD", "cali-FORWARD", "cali-from-wl");
        assertThat(t.rules("FORWARD")).containsExactly("-j cali-FORWARD");
        assertThat(t.rules("cali-FORWARD")).containsExactly("-m comment --comment \"cali:abc def\" -j cali-from-wl");
        assertThat(t.rules("cali-from-wl")).containsExactly("-p tcp -m tcp --dport 8080 -j DROP");
        // the other backend's tables are untouched
        IptablesBackend other = backend == IptablesBackend.NFT ? IptablesBackend.LEGACY : IptablesBackend.NFT;
        if (installed(other.saveBinary(IpVersion.V4))) {
            assertThat(new IptablesRestore(other, XtablesLockSettings.defaults(), prefix()).save(IpVersion.V4, Table.FILTER)
                    .chains()).doesNotContain("cali-FORWARD");
        }
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void noflushKeepsAStrangersRuleInTheSameTableAndChain(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        ns.exec(cli(backend, IpVersion.V4), "-t", "filter", "-A", "INPUT", "-s", "192.0.2.7", "-j", "DROP");
        ns.exec(cli(backend, IpVersion.V4), "-t", "filter", "-N", "stranger");
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.FILTER)
                .declareChain("cali-INPUT")
                .insertRule("INPUT", Rule.of("-j", "cali-INPUT")));
        SavedTable t = r.save(IpVersion.V4, Table.FILTER);
        assertThat(t.rules("INPUT")).containsExactly("-j cali-INPUT", "-s 192.0.2.7/32 -j DROP");
        assertThat(t.chains()).contains("stranger", "cali-INPUT");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void anInvalidRuleFailsTheWholeTransactionAndNamesTheLine(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER)
                .declareChain("cali-x")
                .appendRule("cali-x", Rule.of("-j", "ACCEPT"))
                .appendRule("cali-x", Rule.of("-p", "tcp", "--dport", "80", "-j", "cali-missing"))
                .appendRule("cali-x", Rule.of("-j", "DROP"));
        assertThatThrownBy(() -> r.apply(IpVersion.V4, tx))
                .isInstanceOfSatisfying(IptablesException.class, e -> {
                    assertThat(e.status()).isNotZero();
                    assertThat(e.retryable()).isFalse();
                    assertThat(e.lineNumber()).isPositive();
                    assertThat(tx.render().split("\n")[e.lineNumber() - 1]).isEqualTo(e.line());
                    if (backend == IptablesBackend.LEGACY) {
                        // legacy checks each rule as it parses it
                        assertThat(e.line()).isEqualTo("-A cali-x -p tcp --dport 80 -j cali-missing");
                    } else {
                        // nft resolves jump targets when committing the batch
                        assertThat(e.line()).isIn("-A cali-x -p tcp --dport 80 -j cali-missing", "COMMIT");
                    }
                    assertThat(e.getMessage()).contains("failing input line " + e.lineNumber());
                });
        assertThat(r.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain("cali-x");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void aSyntaxErrorIsBlamedOnItsOwnLine(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER)
                .declareChain("cali-y")
                .appendRule("cali-y", Rule.of("-j", "ACCEPT"))
                .appendRule("cali-y", Rule.of("--no-such-option", "1", "-j", "DROP"));
        assertThatThrownBy(() -> r.apply(IpVersion.V4, tx))
                .isInstanceOfSatisfying(IptablesException.class, e -> {
                    assertThat(e.lineNumber()).isEqualTo(4);
                    assertThat(e.line()).isEqualTo("-A cali-y --no-such-option 1 -j DROP");
                });
        assertThat(r.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain("cali-y");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void deletesRulesAndChains(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.MANGLE)
                .declareChain("cali-PREROUTING")
                .declareChain("cali-old")
                .appendRule("cali-old", Rule.of("-j", "MARK", "--set-xmark", "0x10000/0x10000"))
                .appendRule("cali-PREROUTING", Rule.of("-j", "cali-old"))
                .appendRule("cali-PREROUTING", Rule.of("-s", "10.0.0.0/8", "-j", "ACCEPT"))
                .appendRule("cali-PREROUTING", Rule.of("-s", "10.1.0.0/16", "-j", "ACCEPT"))
                .appendRule("PREROUTING", Rule.of("-j", "cali-PREROUTING")));
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.MANGLE)
                .deleteRule("cali-PREROUTING", Rule.of("-j", "cali-old"))
                .deleteRule("cali-PREROUTING", 2)
                .deleteChain("cali-old"));
        SavedTable t = r.save(IpVersion.V4, Table.MANGLE);
        assertThat(t.chains()).contains("cali-PREROUTING").doesNotContain("cali-old");
        assertThat(t.rules("cali-PREROUTING")).containsExactly("-s 10.0.0.0/8 -j ACCEPT");
        assertThat(t.rules("PREROUTING")).containsExactly("-j cali-PREROUTING");

        // deleting a rule that is not there fails and leaves the table as it was
        assertThatThrownBy(() -> r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.MANGLE)
                .flushChain("cali-PREROUTING")
                .deleteRule("PREROUTING", Rule.of("-j", "cali-nothere"))))
                .isInstanceOf(IptablesException.class);
        assertThat(r.save(IpVersion.V4, Table.MANGLE).rules("cali-PREROUTING")).containsExactly("-s 10.0.0.0/8 -j ACCEPT");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void ipv6GoesThroughIp6tablesAndSeveralTablesInOneRun(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        r.apply(IpVersion.V6,
                RestoreTransaction.forTable(Table.FILTER).declareChain("cali-INPUT")
                        .appendRule("cali-INPUT", Rule.of("-s", "fd00:1::/64", "-p", "ipv6-icmp", "-j", "ACCEPT")),
                RestoreTransaction.forTable(Table.RAW).declareChain("cali-PREROUTING")
                        .appendRule("PREROUTING", Rule.of("-j", "cali-PREROUTING")));
        assertThat(r.save(IpVersion.V6, Table.FILTER).rules("cali-INPUT")).containsExactly("-s fd00:1::/64 -p ipv6-icmp -j ACCEPT");
        assertThat(r.save(IpVersion.V6, Table.RAW).rules("PREROUTING")).containsExactly("-j cali-PREROUTING");
        assertThat(r.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain("cali-INPUT");
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void reapplyingADeclarationFlushesOnlyThatChain(IptablesBackend backend) {
        IptablesRestore r = restore(backend);
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.NAT)
                .declareChain("cali-a").declareChain("cali-b")
                .appendRule("cali-a", Rule.of("-j", "RETURN"))
                .appendRule("cali-b", Rule.of("-j", "RETURN")));
        r.apply(IpVersion.V4, RestoreTransaction.forTable(Table.NAT).flushChain("cali-a")
                .appendRule("cali-a", Rule.of("-d", "10.96.0.1/32", "-j", "RETURN")));
        SavedTable t = r.save(IpVersion.V4, Table.NAT);
        assertThat(t.rules("cali-a")).containsExactly("-d 10.96.0.1/32 -j RETURN");
        assertThat(t.rules("cali-b")).containsExactly("-j RETURN");
    }

    @org.junit.jupiter.api.Test
    void detectionPrefersTheBackendHoldingRulesAndDefaultsToNft() {
        assumeTrue(installed("iptables-legacy-save") && installed("iptables-nft-save"), "both backends needed");
        assertThat(IptablesBackend.detect(prefix())).isEqualTo(IptablesBackend.NFT);
        ns.exec("iptables-legacy", "-A", "INPUT", "-s", "192.0.2.1", "-j", "DROP");
        assertThat(IptablesBackend.detect(prefix())).isEqualTo(IptablesBackend.LEGACY);
        ns.exec("iptables-nft", "-A", "INPUT", "-s", "192.0.2.1", "-j", "DROP");
        ns.exec("ip6tables-nft", "-A", "INPUT", "-s", "2001:db8::1", "-j", "DROP");
        assertThat(IptablesBackend.detect(prefix())).isEqualTo(IptablesBackend.NFT);
    }

    @org.junit.jupiter.api.Test
    void aHeldLockMakesALegacyRestoreWaitThenFailRetryablyAndSucceedOnceReleased(@org.junit.jupiter.api.io.TempDir Path dir) {
        assumeTrue(installed("iptables-legacy-restore"), "legacy tools not installed");
        Path lockFile = dir.resolve("xtables.lock");
        XtablesLockSettings settings = new XtablesLockSettings(lockFile, Duration.ofSeconds(1), Duration.ofMillis(20));
        IptablesRestore legacy = new IptablesRestore(IptablesBackend.LEGACY, settings, prefix());
        RestoreTransaction tx = RestoreTransaction.forTable(Table.FILTER).declareChain("cali-locked");

        try (XtablesLock.Held held = new XtablesLock(settings).acquire()) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> legacy.apply(IpVersion.V4, tx))
                    .isInstanceOfSatisfying(IptablesException.class, e -> {
                        assertThat(e.retryable()).isTrue();
                        assertThat(e.getMessage()).contains(lockFile.toString()).contains("held by another process");
                        assertThat(e.command()).containsSubsequence("--wait", "1", "--wait-interval", "20000");
                    });
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
            assertThat(legacy.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain("cali-locked");

            // the nft backend takes no xtables lock
            if (installed("iptables-nft-restore")) {
                new IptablesRestore(IptablesBackend.NFT, settings, prefix()).apply(IpVersion.V4, tx);
            }
        }
        legacy.apply(IpVersion.V4, tx);
        assertThat(legacy.save(IpVersion.V4, Table.FILTER).chains()).contains("cali-locked");
    }
}
