package calico.felix.dataplane.bpf;

import calico.api.net.Cidr;
import calico.dataplane.bpf.BpfFs;
import calico.dataplane.bpf.BpfMap;
import calico.dataplane.bpf.Conntrack;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.bpf.PolicyProgram;
import calico.dataplane.bpf.Tc;
import calico.dataplane.bpf.Tcx;
import calico.dataplane.bpf.TcDirection;
import calico.dataplane.bpf.TcxLinks;
import calico.dataplane.netlink.Link;
import calico.dataplane.netlink.Netlink;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.dataplane.nft.NftNatOutgoingTable;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The eBPF policy driver: Calico's tc programs ({@link PolicyProgram}) on both hooks of every
 * workload interface ({@code interfacePrefix}), fed from the one {@link DataplaneModel} through
 * the pinned maps ({@link TableCompiler} makes the tables). Every apply compiles the whole model
 * and writes only what differs from what it wrote before, in an order that never lets a table
 * see half a change: set members added, then each changed table written under a new generation
 * and switched to with one map update, then what no table uses any more removed.
 *
 * <p><b>Fails closed.</b> A workload interface with our programs but no table drops everything
 * (an interface that is not an endpoint, as the iptables dispatch chains do). An interface the
 * programs cannot be attached to is set down (no traffic either way), the apply fails naming the
 * endpoint, the interface and the program (felix not ready), and every later apply tries again and
 * sets it up once attached. Pins: {@code <bpffs>/calico}; conntrack survives a restart of felix.
 *
 * <p><b>Host endpoints</b> get the host object's programs ({@link PolicyProgram#loadHost}, loaded
 * when the first is needed) on their interface, and the all-interfaces ({@code *}) endpoint on every
 * interface that is neither a workload's, another host endpoint's nor {@code lo}. A host interface
 * the programs cannot be attached to is reported (felix not ready) and tried again on every apply,
 * but not set down: that would cut the host off, failsafe ports included.
 */
public final class BpfDataplane implements PolicyDriver {

    private static final Logger log = LoggerFactory.getLogger(BpfDataplane.class);

    /** What one direction of an endpoint has in the kernel. */
    private record Table(int gen, List<Rule> rules) {
    }

    private record EpDir(int ifindex, Dir dir) {
    }

    /** A map key with value equality (its hash computed once: sets of thousands are rebuilt every apply). */
    private static final class Key {
        private final byte[] bytes;
        private final int hash;

        Key(byte[] bytes) {
            this.bytes = bytes;
            this.hash = Arrays.hashCode(bytes);
        }

        byte[] bytes() {
            return bytes;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && hash == k.hash && Arrays.equals(bytes, k.bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** A set's member keys under its ID, kept until a batch updates the set (or a resync). */
    private record Members(int id, List<Key> lpm, List<Key> ports) {
    }

    private final DataplaneModel model;
    private final Path bpfFs;
    private final byte[] programObject;
    private PolicyProgram program;
    /** Whether the programs go on interfaces as tcx links (else tc filters): {@code bpfAttachType} and the kernel, at load. */
    private boolean tcx;
    /** The conntrack map's size the loaded objects have ({@code bpfMapSizeConntrack} at load). */
    private int conntrackSize;
    /** The host endpoints' programs, once a host endpoint needed them. */
    private PolicyProgram hostProgram;
    private Netlink netlink;
    private SetIds ids;
    private SetIds prefixIds;
    /** What {@code cali_prefixes} holds: ID to prefix. */
    private final Map<Integer, String> prefixes = new HashMap<>();
    private boolean needResync = true;
    private final Set<Key> lpm = new HashSet<>();
    private final Set<Key> namedPorts = new HashSet<>();
    private final Map<EpDir, Table> tables = new HashMap<>();
    /** natOutgoing's masquerade (netfilter beside the programs). */
    private final NftNatOutgoingTable natTable = new NftNatOutgoingTable();
    /** What {@code cali_ifnets} holds. */
    private final InterfaceNets interfaceNets = new InterfaceNets();
    /** Workload tables compiled by earlier applies, kept until a batch changes what they are made of. */
    private final WorkloadTables workloadTables = new WorkloadTables();
    /** The member keys each set in use has in the maps, by set key. */
    private final Map<String, Members> memberKeys = new HashMap<>();
    /** Sets whose members a batch changed since the last sync (the batch hint): only these are re-read. */
    private final Set<String> changedSets = new HashSet<>();
    /**
     * Every link of the namespace by name, as last listed and kept by {@link #onLinkChange}: null when
     * a link appeared, went or got a new index since (listed again at the next sync).
     */
    private Map<String, Link> knownLinks;
    /** Our tcx links, pinned and held open (a stranger's removal of a pin does not detach them). */
    private final TcxLinks tcxLinks = new TcxLinks();
    /** Interfaces with our programs, by name: their ifindex when attached. */
    private final Map<String, Integer> attached = new TreeMap<>();
    /** Host interfaces with the host endpoint programs, by name: their ifindex when attached. */
    private final Map<String, Integer> hostAttached = new TreeMap<>();
    /** Interfaces we set down because the programs could not be attached. */
    private final Set<String> downed = new HashSet<>();
    /** What the last sync could not do (interfaces held down), reported without failing the apply. */
    private final List<String> problems = new ArrayList<>();

    public BpfDataplane(DataplaneModel model, Path bpfFs) {
        this(model, bpfFs, PolicyProgram.shippedObject());
    }

    /** @param programObject the BPF object to load (tests: one the verifier refuses) */
    public BpfDataplane(DataplaneModel model, Path bpfFs, byte[] programObject) {
        this.model = model;
        this.bpfFs = bpfFs;
        this.programObject = programObject.clone();
    }

    /** {@return where the maps are pinned} */
    public Path pinDir() {
        return bpfFs.resolve("calico");
    }

    @Override
    public String name() {
        return "bpf";
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        workloadTables.invalidate(batch);
        for (DataplaneUpdate u : batch) {
            if (u instanceof DataplaneUpdate.IpSetUpdate s) {
                changedSets.add("set:" + s.id());
            } else if (u instanceof DataplaneUpdate.IpSetDeltaUpdate d) {
                changedSets.add("set:" + d.id());
            } else if (u instanceof DataplaneUpdate.IpSetRemove r) {
                changedSets.add("set:" + r.id());
            }
        }
        if (needResync) {
            return resync();
        }
        try {
            return sync(false);
        } catch (RuntimeException e) {
            needResync = true;
            throw e;
        }
    }

    @Override
    public ApplyStats resync() {
        needResync = true;
        ApplyStats s = sync(true);
        needResync = false;
        return s;
    }

    @Override
    public List<String> problems() {
        return List.copyOf(problems);
    }

    @Override
    public Set<String> heldDown() {
        return Set.copyOf(downed);
    }

    @Override
    public void onLinkChange(String name, int index, boolean deleted) {
        if (knownLinks != null) {
            Link known = knownLinks.get(name);
            if (deleted ? known != null : known == null || known.index() != index) {
                knownLinks = null; // a flag or carrier change keeps the listing
            }
        }
        if (ids == null || needResync) {
            return;
        }
        // An interface that carries our programs under the same index only changed its flags or
        // carrier (the routes setting it up, say): nothing to do. Syncing on each of those made
        // 500 new endpoints cost 500 whole syncs.
        Integer at = attached.containsKey(name) ? attached.get(name) : hostAttached.get(name);
        if (!deleted && at != null && at == index) {
            return;
        }
        if (model.interfacePrefixes().stream().anyMatch(name::startsWith)
                || model.hostEndpoints().values().stream().anyMatch(h -> name.equals(h.interfaceName())
                        || "*".equals(h.interfaceName()))) {
            sync(false);
        }
    }

    @Override
    public void onLinksLost() {
        knownLinks = null;
        if (ids != null && !needResync) {
            sync(false);
        }
    }

    private void open() {
        if (program == null) {
            BpfFs.ensureMounted(bpfFs);
            // bpfMapSizeConntrack: read at load (a later change applies at the next load: a restart or switch).
            conntrackSize = model.config().bpf().conntrackMapSize();
            program = PolicyProgram.load(programObject, pinDir(), conntrackSize);
            netlink = new Netlink();
            // bpfAttachType: read at load too. tcx where asked for and the kernel has it, else tc.
            tcx = model.config().bpf().attachType() == calico.felix.calc.BpfSettings.AttachType.TCX && Tcx.available();
            log.info("BPF programs attach with {}", tcx ? "tcx (pinned links)" : "tc (clsact filters)");
        }
    }

    /** The one write path: compile, then bring the maps and attachments to it. */
    private ApplyStats sync(boolean fullRequested) {
        boolean full = fullRequested;
        problems.clear();
        if (program == null) {
            try {
                open();
                full = true; // a fresh load starts from what the pins hold
            } catch (RuntimeException e) {
                // Nothing can be policed: every workload interface goes down until the programs load.
                Map<String, Link> links = workloadLinks();
                failClosed(links, "load: " + e.getMessage());
                problems.add("BPF policy programs not loaded, " + links.size() + " workload interface(s) set down: "
                        + e.getMessage());
                return new ApplyStats(full, 0, 0, 0, 0);
            }
        }
        BpfMap sets = program.map(PolicyMaps.SETS);
        BpfMap nports = program.map(PolicyMaps.NAMED_PORTS);
        BpfMap rules = program.map(PolicyMaps.RULES);
        BpfMap eps = program.map(PolicyMaps.ENDPOINTS);
        Set<Key> staleRules = new HashSet<>();
        if (full) {
            // Start from what the kernel holds (a restart, a failure): read back, keep nothing in memory.
            lpm.clear();
            namedPorts.clear();
            tables.clear();
            attached.clear();
            hostAttached.clear();
            int floor = 1;
            for (byte[] k : sets.keys()) {
                lpm.add(new Key(k));
                floor = Math.max(floor, PolicyMaps.decodeLpmKey(k).setId() + 1);
            }
            for (byte[] k : nports.keys()) {
                namedPorts.add(new Key(k));
                floor = Math.max(floor, PolicyMaps.namedPortSetId(k) + 1);
            }
            rules.keys().forEach(k -> staleRules.add(new Key(k)));
            for (byte[] k : eps.keys()) {
                byte[] v = eps.get(k);
                if (v != null) {
                    PolicyMaps.EndpointKey ep = PolicyMaps.decodeEndpointKey(k);
                    tables.put(new EpDir(ep.ifindex(), ep.dir()), new Table(PolicyMaps.decodeEndpointValue(v)[0], null));
                }
            }
            ids = new SetIds(floor);
            workloadTables.clear(); // compiled with the old IDs
            memberKeys.clear();
            prefixes.clear();
            int prefixFloor = 1;
            BpfMap pm = program.map(PolicyMaps.PREFIXES);
            for (byte[] k : pm.keys()) {
                int id = java.nio.ByteBuffer.wrap(k).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
                prefixFloor = Math.max(prefixFloor, id + 1);
                byte[] v = pm.get(k);
                if (v != null) {
                    prefixes.put(id, PolicyMaps.decodePrefix(v));
                }
            }
            prefixIds = new SetIds(prefixFloor);
        }
        TableCompiler.Compiled compiled = new TableCompiler(model, ids, prefixIds, workloadTables).compile();
        // The programs' settings: strict reverse path always (as the raw table's rule), host-bound drops per setting.
        int cfg = PolicyMaps.CFG_RPF | (model.settings().endpointToHostAction()
                == calico.felix.dataplane.rules.RuleSettings.EndpointToHostAction.DROP ? PolicyMaps.CFG_HOST_DROP : 0)
                | (model.settings().denyReject() ? PolicyMaps.CFG_REJECT : 0) | InterfaceNets.flags(model);
        program.map(PolicyMaps.CONFIG).put(PolicyMaps.configKey(), PolicyMaps.configValue(cfg));
        // bpfConntrackTimeouts: each state's configured timeout, 0 (the program's default) for the rest.
        BpfMap ctTimeouts = program.map(PolicyMaps.CT_TIMEOUTS);
        Map<PolicyMaps.CtState, java.time.Duration> timeouts = conntrackTimeouts();
        for (PolicyMaps.CtState state : PolicyMaps.CtState.values()) {
            java.time.Duration t = timeouts.get(state);
            ctTimeouts.put(PolicyMaps.ctTimeoutKey(state), t == null ? new byte[4] : PolicyMaps.ctTimeoutValue(t));
        }
        // Flow-log prefixes before the tables that name them.
        BpfMap prefixMap = program.map(PolicyMaps.PREFIXES);
        Set<Integer> prefixesInUse = new HashSet<>();
        for (String p : compiled.prefixes()) {
            int id = prefixIds.id(p);
            prefixesInUse.add(id);
            if (!p.equals(prefixes.get(id))) {
                prefixMap.put(PolicyMaps.prefixKey(id), PolicyMaps.prefixValue(p));
                prefixes.put(id, p);
            }
        }
        if (full || knownLinks == null) {
            knownLinks = allLinks();
        }
        if (full) {
            unpinLinksOfGoneInterfaces(knownLinks.keySet());
        }
        Map<String, Link> all = knownLinks;
        Map<String, Link> links = workloadLinks(all);
        Map<String, TableCompiler.EndpointTables> hostTables = hostInterfaces(compiled, all, links,
                model.config()::isExcludedInterface);
        // Allowed spoofed sources and the service ranges (the flags above say whether the latter are read).
        interfaceNets.sync(program.map(PolicyMaps.IFNETS), model, links, full);
        syncNatOutgoing(full);

        // 1. Set members first: a new table may name them. Only sets new to the tables or changed by
        // a batch are read; what they no longer hold, and the members of sets no table uses, go in 4.
        List<Key> lpmGone = new ArrayList<>();
        List<Key> portsGone = new ArrayList<>();
        for (var it = memberKeys.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Members> e = it.next();
            if (!compiled.sets().contains(e.getKey())) {
                lpmGone.addAll(e.getValue().lpm());
                portsGone.addAll(e.getValue().ports());
                it.remove();
            }
        }
        List<Key> lpmNew = new ArrayList<>();
        List<Key> portsNew = new ArrayList<>();
        for (String key : compiled.sets()) {
            int id = ids.id(key);
            Members old = memberKeys.get(key);
            if (old != null && old.id() == id && !changedSets.contains(key)) {
                continue;
            }
            List<Key> l = new ArrayList<>();
            List<Key> p = new ArrayList<>();
            members(key, id, l, p);
            Members now = new Members(id, List.copyOf(l), List.copyOf(p));
            memberKeys.put(key, now);
            newKeys(now.lpm(), lpm, lpmNew);
            newKeys(now.ports(), namedPorts, portsNew);
            if (old != null) {
                goneKeys(old.lpm(), now.lpm(), lpmGone);
                goneKeys(old.ports(), now.ports(), portsGone);
            }
        }
        changedSets.clear();
        // Counted per set and family: the sets netfilter keeps one per family.
        Set<Long> setsChanged = new HashSet<>();
        sets.putAll(bytes(lpmNew), ones(lpmNew.size()));
        lpmNew.forEach(k -> setsChanged.add(setFamily(PolicyMaps.decodeLpmKey(k.bytes()).setId(), k.bytes())));
        nports.putAll(bytes(portsNew), ones(portsNew.size()));
        portsNew.forEach(k -> setsChanged.add(setFamily(PolicyMaps.namedPortSetId(k.bytes()), k.bytes())));
        if (full) {
            // What the maps held before (read back) that no set in use has.
            Set<Key> wantLpm = new HashSet<>();
            Set<Key> wantPorts = new HashSet<>();
            memberKeys.values().forEach(m -> {
                wantLpm.addAll(m.lpm());
                wantPorts.addAll(m.ports());
            });
            lpm.stream().filter(k -> !wantLpm.contains(k)).forEach(lpmGone::add);
            namedPorts.stream().filter(k -> !wantPorts.contains(k)).forEach(portsGone::add);
        }

        // 2. Tables: a changed one is written under a new generation, then switched to at once.
        Map<EpDir, List<Rule>> want = new HashMap<>();
        compiled.byInterface().forEach((ifName, t) -> {
            Link l = links.get(ifName);
            if (l != null) {
                t.tables().forEach((dir, table) -> want.put(new EpDir(l.index(), dir), table));
            }
        });
        hostTables.forEach((ifName, t) -> t.tables().forEach((dir, table) ->
                want.put(new EpDir(all.get(ifName).index(), dir), table)));
        // All new generations' rules in one batch, then the switches in one, then the old rules in
        // one: each switch is one map update, so each table still changes at once.
        List<byte[]> ruleKeys = new ArrayList<>();
        List<byte[]> ruleValues = new ArrayList<>();
        List<byte[]> epKeys = new ArrayList<>();
        List<byte[]> epValues = new ArrayList<>();
        List<byte[]> oldRules = new ArrayList<>();
        for (Map.Entry<EpDir, List<Rule>> e : want.entrySet()) {
            EpDir ep = e.getKey();
            Table old = tables.get(ep);
            if (old != null && e.getValue().equals(old.rules())) {
                keep(staleRules, ep, old);
                continue;
            }
            int gen = old == null ? 1 : old.gen() % 0xffff + 1;
            List<Rule> t = e.getValue();
            for (int i = 0; i < t.size(); i++) {
                ruleKeys.add(PolicyMaps.ruleKey(ep.ifindex(), ep.dir(), gen, i));
                ruleValues.add(PolicyMaps.rule(t.get(i)));
            }
            epKeys.add(PolicyMaps.endpointKey(ep.ifindex(), ep.dir()));
            epValues.add(PolicyMaps.endpointValue(gen, t.size()));
            Table now = new Table(gen, t);
            tables.put(ep, now);
            keep(staleRules, ep, now);
            if (old != null) {
                ruleKeys(ep, old, oldRules);
            }
        }
        rules.putAll(ruleKeys, ruleValues);
        eps.putAll(epKeys, epValues);
        int written = epKeys.size();
        List<byte[]> goneTables = new ArrayList<>();
        for (var it = tables.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<EpDir, Table> e = it.next();
            if (!want.containsKey(e.getKey())) {
                goneTables.add(PolicyMaps.endpointKey(e.getKey().ifindex(), e.getKey().dir())); // no table: the program drops
                ruleKeys(e.getKey(), e.getValue(), oldRules);
                it.remove();
            }
        }
        eps.deleteAll(goneTables);
        int deleted = goneTables.size();
        staleRules.forEach(k -> oldRules.add(k.bytes()));
        rules.deleteAll(oldRules);

        // 3. Programs on every workload interface (an interface without a table drops everything).
        for (String ifName : List.copyOf(attached.keySet())) {
            if (!links.containsKey(ifName)) {
                attached.remove(ifName);
                unpinLinks(ifName); // the kernel detached them with the interface; the pins stay until removed
            }
        }
        List<String> failures = new ArrayList<>();
        Map<String, String> endpointOf = new HashMap<>();
        compiled.byInterface().forEach((ifName, t) -> endpointOf.put(ifName, t.endpointId()));
        for (Link l : links.values()) {
            Integer at = attached.get(l.name());
            if (at != null && at == l.index()) {
                continue;
            }
            try {
                attach(program, l, Dir.WORKLOAD);
                attached.put(l.name(), l.index());
                if (downed.remove(l.name())) {
                    netlink.setLinkUp(l.name(), true);
                    log.info("BPF programs attached to {}: interface up again", l.name());
                }
            } catch (AttachFailed e) {
                String endpoint = endpointOf.getOrDefault(l.name(), "(no endpoint)");
                failures.add("endpoint " + endpoint + ", interface " + l.name() + ", program " + e.program.program
                        + ": " + e.getMessage());
                failClosed(Map.of(l.name(), l), e.getMessage());
            }
        }

        attachHosts(hostTables, all, failures);

        // 4. Members no table uses any more.
        sets.deleteAll(bytes(lpmGone));
        lpmGone.forEach(k -> {
            lpm.remove(k);
            setsChanged.add(setFamily(PolicyMaps.decodeLpmKey(k.bytes()).setId(), k.bytes()));
        });
        nports.deleteAll(bytes(portsGone));
        portsGone.forEach(k -> {
            namedPorts.remove(k);
            setsChanged.add(setFamily(PolicyMaps.namedPortSetId(k.bytes()), k.bytes()));
        });
        ids.retainOnly(compiled.sets());
        for (Integer id : List.copyOf(prefixes.keySet())) {
            if (!prefixesInUse.contains(id)) {
                prefixMap.delete(PolicyMaps.prefixKey(id));
                prefixes.remove(id);
            }
        }
        prefixIds.retainOnly(compiled.prefixes());
        failures.forEach(f -> problems.add(f.startsWith("host ") ? "BPF host endpoint policy not attached "
                + "(interface left up): " + f.substring(5) : "BPF policy not attached (interface set down): " + f));
        return new ApplyStats(full, written, deleted, setsChanged.size(), 0);
    }

    /**
     * natOutgoing: the nftables driver's masquerade in a table of our own (the programs police, the
     * host's netfilter NATs); a failure is a problem (felix not ready, retried every apply), never a
     * failed apply: policy goes on.
     */
    private void syncNatOutgoing(boolean full) {
        try {
            natTable.sync(model, full);
        } catch (RuntimeException e) {
            log.error("natOutgoing not programmed: {}", e.getMessage());
            natProblem(e);
        }
    }

    /** A stranger's edit of natOutgoing's table undone; a failure is a problem, as in {@link #syncNatOutgoing}. */
    private boolean repairNatOutgoing() {
        try {
            boolean repaired = natTable.repair(model);
            if (repaired) {
                log.warn("natOutgoing: the nftables table {} was changed by someone else: rewritten",
                        NftNatOutgoingTable.NAME);
            }
            return repaired;
        } catch (RuntimeException e) {
            log.error("natOutgoing not checked: {}", e.getMessage());
            natProblem(e);
            return false;
        }
    }

    /** natOutgoing's table could not be programmed or read: a problem (felix not ready), once per apply. */
    private void natProblem(RuntimeException e) {
        String problem = "natOutgoing not programmed (nftables table " + NftNatOutgoingTable.NAME + "): "
                + e.getMessage();
        if (!problems.contains(problem)) {
            problems.add(problem);
        }
    }

    /** {@return a set ID with the family of member key {@code k}} (sets written are counted per family, as netfilter's) */
    private static long setFamily(int id, byte[] k) {
        return ((long) id << 8) | PolicyMaps.memberFamily(k);
    }

    /** Calico's {@code bpfConntrackTimeouts} keys and the conntrack states they time. */
    private static final Map<String, PolicyMaps.CtState> TIMEOUT_STATES = Map.of(
            "tcpSynSent", PolicyMaps.CtState.TCP_SYN, "tcpEstablished", PolicyMaps.CtState.TCP_ESTABLISHED,
            "tcpFinsSeen", PolicyMaps.CtState.TCP_FIN, "tcpResetSeen", PolicyMaps.CtState.TCP_RST,
            "udpTimeout", PolicyMaps.CtState.UDP, "icmpTimeout", PolicyMaps.CtState.ICMP,
            "genericTimeout", PolicyMaps.CtState.OTHER);

    /** {@return the configured conntrack timeouts by state} (states not configured: absent) */
    private Map<PolicyMaps.CtState, java.time.Duration> conntrackTimeouts() {
        Map<PolicyMaps.CtState, java.time.Duration> out = new java.util.EnumMap<>(PolicyMaps.CtState.class);
        model.config().bpf().conntrackTimeouts().forEach((key, d) -> {
            PolicyMaps.CtState state = TIMEOUT_STATES.get(key);
            if (state != null) {
                out.put(state, d);
            }
        });
        return out;
    }

    /** Adds to {@code out} the keys of {@code keys} that {@code held} lacks, and to {@code held}. */
    private static void newKeys(List<Key> keys, Set<Key> held, List<Key> out) {
        for (Key k : keys) {
            if (held.add(k)) {
                out.add(k);
            }
        }
    }

    /** Adds to {@code out} the keys of {@code old} that {@code now} lacks. */
    private static void goneKeys(List<Key> old, List<Key> now, List<Key> out) {
        if (old.isEmpty()) {
            return;
        }
        Set<Key> keep = new HashSet<>(now);
        old.stream().filter(k -> !keep.contains(k)).forEach(out::add);
    }

    private static List<byte[]> bytes(List<Key> keys) {
        return keys.stream().map(Key::bytes).toList();
    }

    private static List<byte[]> ones(int n) {
        return java.util.Collections.nCopies(n, ONE);
    }

    private static final byte[] ONE = {1};

    /** Adds to {@code out} the rule keys of {@code t} (a generation of {@code ep}'s table); unknown rules: none. */
    private static void ruleKeys(EpDir ep, Table t, List<byte[]> out) {
        if (t.rules() != null) {
            for (int i = 0; i < t.rules().size(); i++) {
                out.add(PolicyMaps.ruleKey(ep.ifindex(), ep.dir(), t.gen(), i));
            }
        }
    }

    private static void keep(Set<Key> staleRules, EpDir ep, Table t) {
        if (!staleRules.isEmpty() && t.rules() != null) {
            for (int i = 0; i < t.rules().size(); i++) {
                staleRules.remove(new Key(PolicyMaps.ruleKey(ep.ifindex(), ep.dir(), t.gen(), i)));
            }
        }
    }

    /** Sets each interface down (no packet passes a down veth), remembering it to set it up once attached. */
    private void failClosed(Map<String, Link> links, String why) {
        for (Link l : links.values()) {
            try {
                withNetlink(nl -> {
                    nl.setLinkUp(l.name(), false);
                    return null;
                });
                downed.add(l.name());
                log.error("BPF policy cannot be attached to {}: interface set down ({})", l.name(), why);
            } catch (RuntimeException e) {
                log.error("BPF policy cannot be attached to {} and the interface cannot be set down: {}", l.name(),
                        e.getMessage());
            }
        }
    }

    /**
     * The host endpoint programs on {@code hostTables}' interfaces (loaded first if need be), off
     * interfaces that are no host endpoint's any more; failures named in {@code failures} ("host " first).
     */
    private void attachHosts(Map<String, TableCompiler.EndpointTables> hostTables, Map<String, Link> all,
                             List<String> failures) {
        for (Map.Entry<String, Integer> e : List.copyOf(hostAttached.entrySet())) {
            Link l = all.get(e.getKey());
            if (!hostTables.containsKey(e.getKey()) || l == null || l.index() != e.getValue()) {
                if (l != null && l.index() == e.getValue()) {
                    detachBoth(l);
                } else {
                    unpinLinks(e.getKey()); // gone or re-created: its links went with the old interface
                }
                hostAttached.remove(e.getKey());
            }
        }
        if (hostTables.isEmpty()) {
            return;
        }
        if (hostProgram == null) {
            try {
                hostProgram = PolicyProgram.loadHost(pinDir(), conntrackSize);
            } catch (RuntimeException e) {
                hostTables.forEach((ifName, t) -> failures.add("host endpoint " + t.endpointId() + ", interface "
                        + ifName + ", program " + Dir.HEP_IN.program + ": load: " + e.getMessage()));
                return;
            }
        }
        for (Map.Entry<String, TableCompiler.EndpointTables> e : hostTables.entrySet()) {
            Link l = all.get(e.getKey());
            Integer at = hostAttached.get(l.name());
            if (at != null && at == l.index()) {
                continue;
            }
            try {
                attach(hostProgram, l, Dir.HOST);
                hostAttached.put(l.name(), l.index());
            } catch (AttachFailed ex) {
                failures.add("host endpoint " + e.getValue().endpointId() + ", interface " + l.name() + ", program "
                        + ex.program.program + ": " + ex.getMessage());
            }
        }
    }

    /** A program that could not be attached, and why (the cause's message). */
    private static final class AttachFailed extends RuntimeException {
        final Dir program;

        AttachFailed(Dir program, RuntimeException cause) {
            super(cause.getMessage(), cause);
            this.program = program;
        }
    }

    /**
     * Puts {@code prog}'s programs for {@code dirs} on {@code l}'s hooks: as tcx links (then our tc
     * filters, an earlier run's, go: tcx runs first and would leave them a second walk), or as tc
     * filters, making its clsact if it has none (then our tcx links, an earlier run's, go).
     */
    private void attach(PolicyProgram prog, Link l, List<Dir> dirs) {
        Dir trying = dirs.get(0);
        if (tcx) {
            try {
                for (Dir d : dirs) {
                    trying = d;
                    prog.attachTcx(l.index(), l.name(), d, tcxLinks);
                }
            } catch (RuntimeException e) {
                throw new AttachFailed(trying, e);
            }
            for (Dir d : dirs) {
                try {
                    Tc.detach(l.index(), d.hook);
                } catch (RuntimeException e) {
                    log.warn("BPF programs attached to {} with tcx; an older tc filter of ours stays: {}", l.name(),
                            e.getMessage());
                }
            }
            return;
        }
        try {
            String qdisc = netlink.ingressQdiscKind(l.index()).orElse(null);
            if (qdisc == null) {
                prog.createHooks(l.index(), l.name());
            } else if (!qdisc.equals("clsact")) {
                // tc would take our egress program into that qdisc's one block and run it on ingress.
                throw new IllegalStateException("a '" + qdisc + "' qdisc holds the interface's ingress slot, "
                        + "where tc's BPF hooks need clsact");
            }
            for (Dir d : dirs) {
                trying = d;
                prog.attach(l.index(), l.name(), d);
            }
            for (Dir d : dirs) {
                tcxLinks.detach(PolicyProgram.linkPin(pinDir(), l.name(), d.hook));
            }
        } catch (RuntimeException e) {
            throw new AttachFailed(trying, e);
        }
    }

    /**
     * The host interfaces to police and their tables: each named host endpoint's interface that
     * exists, and with an all-interfaces endpoint every other interface but workloads' and {@code lo};
     * never one {@code interfaceExclude} names (its regular expressions included: the interfaces are
     * listed here, unlike the rule renderer's match on names).
     */
    private static Map<String, TableCompiler.EndpointTables> hostInterfaces(TableCompiler.Compiled compiled,
            Map<String, Link> all, Map<String, Link> workloads, java.util.function.Predicate<String> excluded) {
        Map<String, TableCompiler.EndpointTables> out = new TreeMap<>();
        compiled.hosts().forEach((ifName, t) -> {
            if (all.containsKey(ifName) && !workloads.containsKey(ifName) && !excluded.test(ifName)) {
                out.put(ifName, t);
            }
        });
        if (compiled.allInterfaces() != null) {
            for (String ifName : all.keySet()) {
                if (!ifName.equals("lo") && !workloads.containsKey(ifName) && !excluded.test(ifName)) {
                    out.putIfAbsent(ifName, compiled.allInterfaces());
                }
            }
        }
        return out;
    }

    /** Our programs off both hooks of {@code l}, tc filters and tcx links alike. */
    private void detachBoth(Link l) {
        for (TcDirection hook : TcDirection.values()) {
            Tc.detach(l.index(), hook);
        }
        unpinLinks(l.name());
    }

    private void unpinLinks(String ifName) {
        for (TcDirection hook : TcDirection.values()) {
            tcxLinks.detach(PolicyProgram.linkPin(pinDir(), ifName, hook));
        }
    }

    /** Removes the tcx links (pins, and descriptors held) of interfaces not in {@code present} (gone meanwhile). */
    private void unpinLinksOfGoneInterfaces(Set<String> present) {
        Path dir = pinDir().resolve(PolicyProgram.LINKS);
        Set<Path> ours = new HashSet<>(tcxLinks.heldPins());
        if (java.nio.file.Files.isDirectory(dir)) {
            try (var pins = java.nio.file.Files.list(dir)) {
                pins.forEach(ours::add);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot list the tcx link pins in " + dir, e);
            }
        }
        for (Path p : ours) {
            if (!Tcx.interfaceOf(p).map(present::contains).orElse(false)) {
                tcxLinks.detach(p);
            }
        }
    }

    /** {@return whether our program is on {@code ifName}'s hook, and pinned}, in the mode the driver attaches with */
    private TcxLinks.State hookState(String ifName, int ifindex, TcDirection hook) {
        if (tcx) {
            return tcxLinks.check(PolicyProgram.linkPin(pinDir(), ifName, hook), ifindex);
        }
        return Tc.attachedProgramId(ifindex, hook).isPresent() ? TcxLinks.State.ATTACHED : TcxLinks.State.DETACHED;
    }

    private Map<String, Link> workloadLinks() {
        return workloadLinks(allLinks());
    }

    private Map<String, Link> workloadLinks(Map<String, Link> all) {
        List<String> prefixes = model.interfacePrefixes();
        Map<String, Link> out = new TreeMap<>();
        all.forEach((name, l) -> {
            if (prefixes.stream().anyMatch(name::startsWith)) {
                out.put(name, l);
            }
        });
        return out;
    }

    private static Map<String, Integer> indexes(Map<String, Link> links) {
        Map<String, Integer> out = new HashMap<>();
        links.forEach((name, l) -> out.put(name, l.index()));
        return out;
    }

    private Map<String, Link> allLinks() {
        Map<String, Link> out = new TreeMap<>();
        for (Link l : withNetlink(Netlink::links)) {
            out.put(l.name(), l);
        }
        return out;
    }

    /** Runs {@code call} on the open netlink socket, or on one of its own while the programs are not loaded. */
    private <T> T withNetlink(Function<Netlink, T> call) {
        if (netlink != null) {
            return call.apply(netlink);
        }
        try (Netlink nl = new Netlink()) {
            return call.apply(nl);
        }
    }

    /** The map keys of set {@code key}'s members, both families. */
    private void members(String key, int id, List<Key> lpmOut, List<Key> portsOut) {
        if (key.startsWith("nets:")) {
            for (String cidr : key.substring(5).split(",")) {
                Cidr c = Cidr.parse(cidr);
                lpmOut.add(new Key(PolicyMaps.lpmKey(id, inet(c), c.prefixLength())));
            }
            return;
        }
        DataplaneModel.IpSet set = model.ipSets().get(key.substring(4));
        if (set == null) {
            return; // named but absent: programmed empty (the model has recorded the violation)
        }
        for (IpSetMember m : set.members()) {
            if (set.type() == IpSetType.NET) {
                lpmOut.add(new Key(PolicyMaps.lpmKey(id, inet(m.cidr()), m.cidr().prefixLength())));
            } else {
                portsOut.add(new Key(PolicyMaps.namedPortKey(id, inet(m.cidr()),
                        calico.felix.flows.FlowContext.protocolNumber(m.protocol()), m.port())));
            }
        }
    }

    /** {@return the network address of {@code c}} (an IPv6 one as IPv6, never as a mapped IPv4 address) */
    static InetAddress inet(Cidr c) {
        try {
            byte[] a = c.network().address().toBytes();
            // An IPv6 member is never read as IPv4 (getByAddress would make ::ffff:a.b.c.d an Inet4Address).
            return a.length == 16 ? java.net.Inet6Address.getByAddress(null, a, -1) : InetAddress.getByAddress(a);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(c.toString(), e);
        }
    }

    @Override
    public int refresh() {
        if (program == null || ids == null || needResync) {
            return 0;
        }
        // A stranger's map edits: an endpoint's table entry changed or gone, set members gone.
        int repaired = 0;
        BpfMap eps = program.map(PolicyMaps.ENDPOINTS);
        for (Map.Entry<EpDir, Table> e : tables.entrySet()) {
            byte[] key = PolicyMaps.endpointKey(e.getKey().ifindex(), e.getKey().dir());
            byte[] want = PolicyMaps.endpointValue(e.getValue().gen(), e.getValue().rules() == null ? 0
                    : e.getValue().rules().size());
            if (e.getValue().rules() != null && !Arrays.equals(want, eps.get(key))) {
                eps.put(key, want);
                repaired++;
            }
        }
        repaired += restoreMembers(program.map(PolicyMaps.SETS), lpm, k -> PolicyMaps.decodeLpmKey(k).setId());
        repaired += restoreMembers(program.map(PolicyMaps.NAMED_PORTS), namedPorts, PolicyMaps::namedPortSetId);
        repaired += interfaceNets.restore(program.map(PolicyMaps.IFNETS)) ? 1 : 0;
        repaired += repairNatOutgoing() ? 1 : 0;
        // Links the announcements missed (none expected: a lost announcement re-reads them).
        Map<String, Link> listed = allLinks();
        if (knownLinks != null && !indexes(listed).equals(indexes(knownLinks))) {
            knownLinks = null;
            repaired++;
        }
        // A stranger's `tc filter del`, a qdisc replaced, a tcx link detached: attach again. A
        // tcx link's pin removed: pinned again (the link we hold stayed on its hook).
        for (Map<String, Integer> held : List.of(attached, hostAttached)) {
            for (Map.Entry<String, Integer> e : List.copyOf(held.entrySet())) {
                for (TcDirection hook : TcDirection.values()) {
                    TcxLinks.State state = hookState(e.getKey(), e.getValue(), hook);
                    if (state == TcxLinks.State.PIN_MISSING) {
                        log.warn("BPF: the pin of {}'s {} tcx link was removed: pinned again", e.getKey(),
                                hook.name().toLowerCase(java.util.Locale.ROOT));
                        tcxLinks.repin(PolicyProgram.linkPin(pinDir(), e.getKey(), hook));
                        repaired++;
                    } else if (state == TcxLinks.State.DETACHED) {
                        held.remove(e.getKey());
                        repaired++;
                        break;
                    }
                }
            }
        }
        if (repaired > 0) {
            sync(false);
        }
        // Expired conntrack entries (the program already ignores them) freed before the LRU must evict live ones.
        int expired = new Conntrack(program.map(PolicyMaps.CONNTRACK)).clean(System.nanoTime(), conntrackTimeouts());
        if (expired > 0) {
            log.debug("BPF conntrack: {} expired entries removed", expired);
        }
        return repaired;
    }

    /** Puts back members of {@code held} missing from {@code map}; {@return how many sets were repaired} */
    private static int restoreMembers(BpfMap map, Set<Key> held, java.util.function.ToIntFunction<byte[]> setOf) {
        Set<Key> present = new HashSet<>();
        map.keys().forEach(k -> present.add(new Key(k)));
        Set<Integer> repaired = new HashSet<>();
        for (Key k : held) {
            if (!present.contains(k)) {
                map.put(k.bytes(), new byte[] {1});
                repaired.add(setOf.applyAsInt(k.bytes()));
            }
        }
        return repaired.size();
    }

    /** {@return the set ID of the graph's IP set {@code graphSetId}, or null when no table uses it} (tests) */
    Integer setId(String graphSetId) {
        return ids == null ? null : ids.existing("set:" + graphSetId);
    }

    @Override
    public Programmed programmed() {
        int ruleCount = tables.values().stream().mapToInt(t -> t.rules() == null ? 0 : t.rules().size()).sum();
        return new Programmed(tables.size(), ruleCount, ids == null ? 0 : ids.size(), lpm.size() + namedPorts.size());
    }

    /** Detaches our programs from every interface and removes the pins (the maps go with their last user). */
    @Override
    public void removeAll() {
        Map<String, Link> all = allLinks();
        Map<String, Link> workloads = workloadLinks(all);
        // Host interfaces: ours is the one filter at our handle, wherever an earlier run attached it.
        all.forEach((name, l) -> {
            if (!workloads.containsKey(name)) {
                detachBoth(l);
            }
        });
        hostAttached.clear();
        for (Link l : workloads.values()) {
            detachBoth(l);
            if (downed.remove(l.name()) && netlink != null) {
                netlink.setLinkUp(l.name(), true);
            }
        }
        attached.clear();
        knownLinks = null;
        try {
            natTable.remove();
        } catch (RuntimeException e) {
            log.warn("the natOutgoing table {} may remain: {}", NftNatOutgoingTable.NAME, e.getMessage());
        }
        close();
        BpfFs.removePins(pinDir());
        needResync = true;
    }

    @Override
    public void close() {
        tcxLinks.close(); // the pins keep the programs on their hooks
        if (hostProgram != null) {
            hostProgram.close();
            hostProgram = null;
        }
        if (program != null) {
            program.close();
            program = null;
        }
        if (netlink != null) {
            netlink.close();
            netlink = null;
        }
    }
}
