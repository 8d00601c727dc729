package calico.felix.dataplane.iptables;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.PolicyDriver;
import static calico.felix.dataplane.testing.Fixtures.foldAndApply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import calico.api.net.Cidr;
import calico.dataplane.iptables.IpVersion;
import calico.dataplane.iptables.Ipset;
import calico.dataplane.iptables.IpsetInfo;
import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.IptablesRestore;
import calico.dataplane.iptables.SavedTable;
import calico.dataplane.iptables.Table;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.calc.FelixSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The driver against a real kernel (one namespace, no packets): every rule form the renderer
 * makes is accepted and reads back stable; sets are created before and destroyed after the
 * rules that use them; only changed chains and sets are written; a resync removes stale owned
 * state and leaves everything else alone.
 */
class IptablesDataplaneKernelTest {

    private static final PolicyId POLICY = new PolicyId("default", null, "everything", ResourceKind.GLOBAL_NETWORK_POLICY);

    private NetNs ns;
    private IptablesRestore restore;
    private Ipset ipset;
    private IptablesDataplane dataplane;
    private DataplaneModel model;
    private String iptables;

    @AfterEach
    void tearDown() {
        if (ns != null) {
            ns.close();
        }
    }

    private void start(IptablesBackend backend) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/" + backend.restoreBinary(IpVersion.V4))), "backend installed");
        ns = NetNs.create("ipk");
        List<String> prefix = List.of("ip", "netns", "exec", ns.name());
        restore = new IptablesRestore(backend, XtablesLockSettings.defaults(), prefix);
        ipset = new Ipset(prefix);
        model = new DataplaneModel();
        dataplane = new IptablesDataplane(restore, ipset, model);
        iptables = backend.restoreBinary(IpVersion.V4).replace("-restore", "");
    }

    private static Side side(List<String> nets, List<String> notNets, List<String> ports, List<String> notPorts,
                             List<String> sets, List<String> notSets, List<String> named, List<String> notNamed) {
        return new Side(nets, notNets, ports, notPorts, sets, notSets, named, notNamed);
    }

    /** A policy using every rule feature the renderer supports. */
    private static CompiledPolicy everything() {
        Side src = side(List.of("10.0.0.0/8"), List.of("10.1.0.0/16", "10.2.0.0/16"), List.of("1000:2000"),
                List.of("1500"), List.of("s:a"), List.of(), List.of(), List.of());
        Side dst = side(List.of("192.168.0.0/16", "172.16.0.0/12"), List.of(), List.of("80", "443"),
                List.of(), List.of(), List.of("s:a"), List.of("n:web"), List.of("n:web"));
        return new CompiledPolicy(List.of(
                new CompiledRule(Action.Allow, null, "TCP", null, null, null, src, dst, null),
                new CompiledRule(Action.Log, 4, "ICMP", null, new Rule.IcmpFields(8, 0), new Rule.IcmpFields(3, null),
                        Side.ANY, Side.ANY, null),
                new CompiledRule(Action.Pass, null, null, "UDP", null, null, Side.ANY,
                        side(List.of(), List.of("10.9.0.0/16"), List.of(), List.of(), List.of(), List.of(), List.of(),
                                List.of()), null),
                new CompiledRule(Action.Deny, null, null, null, null, null, Side.ANY, Side.ANY, null)),
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)), false);
    }

    private static List<DataplaneUpdate> firstBatch() {
        return List.of(
                new DataplaneUpdate.IpSetUpdate("s:a", IpSetType.NET, Set.of(IpSetMember.net(Cidr.parse("10.0.0.1/32")),
                        IpSetMember.net(Cidr.parse("10.0.1.0/24")))),
                new DataplaneUpdate.IpSetUpdate("n:web", IpSetType.IP_AND_PORT,
                        Set.of(new IpSetMember(Cidr.parse("10.0.0.1/32"), "tcp", 8080))),
                new DataplaneUpdate.ActivePolicyUpdate(POLICY, everything()),
                new DataplaneUpdate.ActiveProfileUpdate("kns.test", new CompiledPolicy(
                        List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)),
                        List.of(), false)),
                new DataplaneUpdate.WorkloadEndpointUpdate("test/a", "cali1234abcd", null, List.of("10.0.0.1/32"),
                        List.of(), List.of("kns.test"),
                        List.of(new TierPolicies("default", Action.Deny, List.of(POLICY), false)), List.of()));
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void everyRuleFormIsAcceptedAndSetsFollowTheirRules(IptablesBackend backend) {
        start(backend);
        PolicyDriver.ApplyStats first = foldAndApply(model, dataplane, firstBatch());
        assertThat(first.resync()).isTrue();
        // What save printed after the apply is stable: nothing to repair.
        assertThat(dataplane.refresh()).isZero();
        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        assertThat(saved.rules("FORWARD")).containsExactly("-j cali-FORWARD");
        assertThat(saved.rules(Names.policyInbound(POLICY))).hasSize(
                dataplane.desiredChains().get(Names.policyInbound(POLICY)).rules().size());
        Map<String, IpsetInfo> sets = ipset.list();
        assertThat(sets.get(Names.ipSetV4("s:a")).members()).containsExactlyInAnyOrder("10.0.0.1", "10.0.1.0/24");
        assertThat(sets.get(Names.ipSetV4("n:web")).members()).containsExactly("10.0.0.1,tcp:8080");
        assertThat(sets).containsKey(Names.netsSet(IpFamily.V4, List.of("10.1.0.0/16", "10.2.0.0/16")));

        // A membership change touches one set and no chain.
        PolicyDriver.ApplyStats delta = foldAndApply(model, dataplane, List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:a",
                Set.of(IpSetMember.net(Cidr.parse("10.0.2.2/32"))), Set.of(IpSetMember.net(Cidr.parse("10.0.1.0/24"))))));
        assertThat(delta).isEqualTo(new PolicyDriver.ApplyStats(false, 0, 0, 1, 0));
        assertThat(ipset.list(Names.ipSetV4("s:a")).members()).containsExactlyInAnyOrder("10.0.0.1", "10.0.2.2");

        // A profile change rewrites that profile's chain only (once per family).
        PolicyDriver.ApplyStats profile = foldAndApply(model, dataplane, List.of(new DataplaneUpdate.ActiveProfileUpdate(
                "kns.test", new CompiledPolicy(List.of(), List.of(), false))));
        assertThat(profile).isEqualTo(new PolicyDriver.ApplyStats(false, 2, 0, 0, 0));
        assertThat(restore.save(IpVersion.V6, Table.FILTER).rules("cali-pri-kns.test")).isEmpty();
        assertThat(restore.save(IpVersion.V4, Table.FILTER).rules("cali-pri-kns.test")).isEmpty();

        // Dropping the policy and its sets removes both chains and every set it used, sets after rules.
        PolicyDriver.ApplyStats removal = foldAndApply(model, dataplane, List.of(
                new DataplaneUpdate.WorkloadEndpointUpdate("test/a", "cali1234abcd", null, List.of("10.0.0.1/32"),
                        List.of(), List.of("kns.test"), List.of(), List.of()),
                new DataplaneUpdate.ActivePolicyRemove(POLICY),
                new DataplaneUpdate.IpSetRemove("s:a"), new DataplaneUpdate.IpSetRemove("n:web")));
        assertThat(removal.chainsWritten()).isEqualTo(2); // cali-tw-cali1234abcd in each family
        assertThat(removal.chainsDeleted()).isEqualTo(4);
        // two graph sets per family, two IPv4 net sets (a single notNet is "! -d")
        assertThat(removal.setsDeleted()).isEqualTo(6);
        assertThat(ipset.list().keySet()).noneMatch(n -> n.startsWith("cali4") || n.startsWith("cali6"));
        assertThat(restore.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain(Names.policyInbound(POLICY));
        assertThat(dataplane.refresh()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void resyncRemovesStaleOwnedStateAndLeavesTheRestAlone(IptablesBackend backend) {
        start(backend);
        ns.exec(iptables, "-N", "cali-old");
        ns.exec(iptables, "-A", "cali-old", "-j", "DROP");
        ns.exec(iptables, "-N", "cali-FORWARD");
        ns.exec(iptables, "-N", "other");
        ns.exec(iptables, "-A", "other", "-p", "tcp", "-j", "ACCEPT");
        ns.exec(iptables, "-A", "FORWARD", "-j", "other");
        ns.exec(iptables, "-A", "FORWARD", "-j", "cali-FORWARD");
        ns.exec(iptables, "-A", "FORWARD", "-j", "cali-FORWARD");
        ns.exec("ipset", "create", "cali40stale", "hash:net");
        ns.exec("ipset", "create", "foreign", "hash:net");

        foldAndApply(model, dataplane, firstBatch());

        SavedTable saved = restore.save(IpVersion.V4, Table.FILTER);
        assertThat(saved.chains()).doesNotContain("cali-old").contains("other", "cali-FORWARD");
        assertThat(saved.rules("FORWARD")).containsExactly("-j cali-FORWARD", "-j other");
        assertThat(saved.rules("other")).containsExactly("-p tcp -j ACCEPT");
        assertThat(ipset.list().keySet()).doesNotContain("cali40stale").contains("foreign", Names.ipSetV4("s:a"));
        assertThat(dataplane.refresh()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void chainInsertModePlacesOneJumpPerHookedChainAndRemoveAllTakesEverythingBack(IptablesBackend backend) {
        start(backend);
        String ip6tables = backend.restoreBinary(IpVersion.V6).replace("-restore", "");
        for (String tool : List.of(iptables, ip6tables)) {
            ns.exec(tool, "-A", "FORWARD", "-p", "udp", "-j", "ACCEPT");
            ns.exec(tool, "-A", "INPUT", "-p", "udp", "-j", "ACCEPT");
            ns.exec(tool, "-t", "nat", "-A", "POSTROUTING", "-p", "udp", "-j", "ACCEPT");
        }
        foldAndApply(model, dataplane, firstBatch()); // no ConfigUpdate: Calico's default Insert
        for (IpVersion v : IpVersion.values()) {
            SavedTable filter = restore.save(v, Table.FILTER);
            assertThat(filter.rules("FORWARD")).as(v + " insert").containsExactly("-j cali-FORWARD", "-p udp -j ACCEPT");
            assertThat(filter.rules("INPUT")).containsExactly("-j cali-INPUT", "-p udp -j ACCEPT");
            assertThat(filter.rules("OUTPUT")).containsExactly("-j cali-OUTPUT");
            assertThat(restore.save(v, Table.NAT).rules("POSTROUTING"))
                    .containsExactly("-j cali-POSTROUTING", "-p udp -j ACCEPT");
        }

        foldAndApply(model, dataplane, List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("chainInsertMode", "Append")))));
        for (IpVersion v : IpVersion.values()) {
            assertThat(restore.save(v, Table.FILTER).rules("FORWARD")).as(v + " append")
                    .containsExactly("-p udp -j ACCEPT", "-j cali-FORWARD");
            assertThat(restore.save(v, Table.NAT).rules("POSTROUTING"))
                    .containsExactly("-p udp -j ACCEPT", "-j cali-POSTROUTING");
        }
        assertThat(dataplane.refresh()).isZero();
        // A stranger appends after us, and duplicates our INPUT jump: refresh puts us back, once, last.
        ns.exec(ip6tables, "-A", "FORWARD", "-p", "tcp", "-j", "ACCEPT");
        ns.exec(iptables, "-I", "INPUT", "1", "-j", "cali-INPUT");
        assertThat(dataplane.refresh()).isEqualTo(2);
        assertThat(restore.save(IpVersion.V6, Table.FILTER).rules("FORWARD"))
                .containsExactly("-p udp -j ACCEPT", "-p tcp -j ACCEPT", "-j cali-FORWARD");
        assertThat(restore.save(IpVersion.V4, Table.FILTER).rules("INPUT"))
                .containsExactly("-p udp -j ACCEPT", "-j cali-INPUT");

        dataplane.removeAll();
        for (IpVersion v : IpVersion.values()) {
            SavedTable filter = restore.save(v, Table.FILTER);
            SavedTable nat = restore.save(v, Table.NAT);
            assertThat(filter.chains()).as(v + " removeAll").noneMatch(c -> c.startsWith("cali-"));
            assertThat(nat.chains()).noneMatch(c -> c.startsWith("cali-"));
            assertThat(filter.rules("FORWARD")).allMatch(r -> r.startsWith("-p "));
            assertThat(filter.rules("INPUT")).containsExactly("-p udp -j ACCEPT");
            assertThat(nat.rules("POSTROUTING")).containsExactly("-p udp -j ACCEPT");
        }
        assertThat(ipset.list().keySet()).noneMatch(n -> n.startsWith("cali"));
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void ipv6SupportFalseProgramsIpv4OnlyAndTurningItOffRemovesIpv6(IptablesBackend backend) {
        start(backend);
        foldAndApply(model, dataplane, firstBatch());
        assertThat(restore.save(IpVersion.V6, Table.FILTER).chains()).contains("cali-FORWARD", "cali-wl-to-host");
        assertThat(ipset.list().keySet()).anyMatch(n -> n.startsWith("cali60"));
        // ICMPv6 to the host is allowed in the IPv6 table only.
        assertThat(restore.save(IpVersion.V6, Table.FILTER).rules("cali-wl-to-host"))
                .anyMatch(r -> r.contains("--icmpv6-type 135"));
        assertThat(unhashed(restore.save(IpVersion.V4, Table.FILTER).rules("cali-wl-to-host")))
                .containsExactly("-j cali-from-wl-dispatch", "-m comment --comment defaultEndpointToHostAction -j DROP");

        PolicyDriver.ApplyStats off = foldAndApply(model, dataplane, List.of(
                new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("ipv6Support", "false")))));
        assertThat(off.resync()).isTrue();
        assertThat(dataplane.families()).containsExactly(IpFamily.V4);
        assertThat(restore.save(IpVersion.V6, Table.FILTER).chains()).noneMatch(c -> c.startsWith("cali-"));
        assertThat(restore.save(IpVersion.V6, Table.FILTER).rules("FORWARD")).isEmpty();
        assertThat(ipset.list().keySet()).noneMatch(n -> n.startsWith("cali6")).anyMatch(n -> n.startsWith("cali40"));
        assertThat(restore.save(IpVersion.V4, Table.FILTER).rules("FORWARD")).containsExactly("-j cali-FORWARD");
        assertThat(dataplane.refresh()).isZero();
    }

    @ParameterizedTest
    @EnumSource(IptablesBackend.class)
    void aRestartAdoptsWhatIsThereAndWritesOnlyWhatChangedWhileFelixWasAway(IptablesBackend backend) {
        start(backend);
        foldAndApply(model, dataplane, firstBatch());
        ns.exec("ping", "-c", "2", "-i", "0.01", "127.0.0.1"); // counters in our OUTPUT and INPUT chains
        String before = kernel(backend);
        assertThat(before).as("counted packets in a chain of ours").containsPattern("\\[[1-9][0-9]*:[0-9]+\\] -A cali-");

        PolicyDriver.ApplyStats same = restart(firstBatch());

        assertThat(same).as("nothing changed: nothing written").isEqualTo(new PolicyDriver.ApplyStats(true, 0, 0, 0, 0));
        assertThat(kernel(backend)).as("every rule, set and counter as it was").isEqualTo(before);
        assertThat(dataplane.refresh()).isZero();

        // While felix is away: a stranger's chain and set appear, a set member and a profile change.
        ns.exec(iptables, "-N", "cali-old");
        ns.exec("ipset", "create", "cali40stale", "hash:net");
        String forward = chainLines(kernel(backend), "cali-FORWARD");
        List<DataplaneUpdate> changed = new java.util.ArrayList<>(firstBatch());
        changed.set(0, new DataplaneUpdate.IpSetUpdate("s:a", IpSetType.NET, Set.of(IpSetMember.net(Cidr.parse("10.0.0.9/32")))));
        changed.set(3, new DataplaneUpdate.ActiveProfileUpdate("kns.test", new CompiledPolicy(List.of(), List.of(), false)));

        PolicyDriver.ApplyStats repaired = restart(changed);

        assertThat(repaired).as("the profile's chain in each family, one set, the stranger's chain and set")
                .isEqualTo(new PolicyDriver.ApplyStats(true, 2, 1, 1, 1));
        assertThat(ipset.list(Names.ipSetV4("s:a")).members()).containsExactly("10.0.0.9");
        assertThat(restore.save(IpVersion.V4, Table.FILTER).chains()).doesNotContain("cali-old");
        assertThat(chainLines(kernel(backend), "cali-FORWARD")).as("an unchanged chain kept, counters and all")
                .isEqualTo(forward);
        assertThat(dataplane.refresh()).isZero();
    }

    /** A new driver (felix restarted) whose first batch is {@code batch}; {@return its first apply's stats} */
    private PolicyDriver.ApplyStats restart(List<DataplaneUpdate> batch) {
        model = new DataplaneModel();
        dataplane = new IptablesDataplane(restore, ipset, model);
        return foldAndApply(model, dataplane, batch);
    }

    /** Both families' tables with counters, and every set, without {@code -save}'s dated comment lines. */
    private String kernel(IptablesBackend backend) {
        String ip6tables = backend.restoreBinary(IpVersion.V6).replace("-restore", "");
        return String.join("\n", ns.exec(iptables + "-save", "-c"), ns.exec(ip6tables + "-save", "-c"),
                ns.exec("ipset", "save")).lines().filter(l -> !l.startsWith("#")).collect(java.util.stream.Collectors.joining("\n"));
    }

    private static String chainLines(String saved, String chain) {
        return saved.lines().filter(l -> l.contains("-A " + chain + " ")).collect(java.util.stream.Collectors.joining("\n"));
    }

    /** The rules as {@code -save} printed them, each checked to carry our hash comment and shown without it. */
    private static List<String> unhashed(List<String> rules) {
        assertThat(rules).allMatch(r -> r.matches("(.* )?-m comment --comment \"cali:[A-Za-z0-9_-]{16}\" .*"));
        return rules.stream().map(r -> r.replaceFirst("-m comment --comment \"cali:\\S+\" ", "")).toList();
    }
}
