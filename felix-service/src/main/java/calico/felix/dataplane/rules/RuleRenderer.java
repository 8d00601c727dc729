package calico.felix.dataplane.rules;

import calico.api.model.Action;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.api.model.FelixConfigurationSpec.ProtoPort;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.GenericChain.Dispatch;
import calico.felix.dataplane.rules.GenericChain.Rules;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Ruleset.Entry;
import calico.felix.dataplane.rules.Ruleset.Hook;
import calico.felix.dataplane.rules.Ruleset.Table;
import calico.felix.dataplane.rules.NflogPrefix.Verdict;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Renders a {@link DataplaneModel} into Calico's chain layout as a backend-neutral
 * {@link Ruleset}; the iptables and nftables drivers only format it. Every semantic decision
 * (what is allowed, in which order, which verdict) is made here. The layout, table by table, is
 * in {@code felix-service/design/rules.md} §2; in short:
 *
 * <pre>
 * raw    PREROUTING: clear marks; mark workload traffic; drop it when its source fails the reverse-path
 *                    check; untracked (doNotTrack) host endpoint ingress; accepted: ACCEPT
 * raw    OUTPUT:     clear marks; untracked host endpoint egress; accepted: ACCEPT
 * mangle PREROUTING: established: ACCEPT; pre-DNAT host endpoint ingress; accepted: ACCEPT
 * filter PREROUTING: nftables only ({@link RuleSettings#judgesEgressAtPrerouting()}): a workload's egress, once,
 *                    after DNAT; FORWARD and INPUT read its outcome from the marks instead of jumping to it
 * filter FORWARD:    incoming host endpoint's applyOnForward policy (unless raw/mangle accepted);
 *                    from/to workload dispatch; outgoing host endpoint's applyOnForward policy; allow
 * filter INPUT:      [IPIP/VXLAN from Calico hosts]; workloads goto cali-wl-to-host; raw/mangle-accepted:
 *                    allow; host endpoint ingress (the "*" endpoint for interfaces without one); allow
 * filter OUTPUT:     raw-accepted: allow; to workloads RETURN; DNAT'd: RETURN; host endpoint egress; allow
 * endpoint chains:   marks cleared; ct est/rel allow, invalid deny; per tier: policies with pass/accept
 *                    marks, end-of-tier deny; profiles; final deny (untracked, pre-DNAT and forward
 *                    chains differ as Calico's chain types do: see {@link Kind})
 * nat POSTROUTING:   natOutgoing pools' traffic leaving the pools: MASQUERADE
 * </pre>
 *
 * <p>Families: a ruleset serves the families it is asked for (iptables renders one per table,
 * an nftables {@code inet} table both). A rule that names addresses, sets, ICMP or an IP version
 * is emitted once per family it can match, with a {@link Match.Family}; a rule whose nets are all
 * of another family is left out of that family (it can never match there); other rules serve all.
 *
 * <p>A rule whose side has several numeric-port lists or named-port sets (alternatives) becomes
 * one generic rule per combination.
 */
public final class RuleRenderer {

    /** ICMPv6 types a workload needs to reach its router: MLD query/report/done, RS, NS, NA (as Calico). */
    static final List<Integer> ICMPV6_TO_HOST = List.of(130, 131, 132, 133, 135, 136);

    private final MarkBits marks;
    /** Workload interface prefixes: every rule matching workload interfaces is rendered once per prefix, in order. */
    private final List<String> interfacePrefixes;
    private final Set<IpFamily> families;
    private final RuleSettings settings;
    /**
     * {@code interfaceExclude}'s exact names, which the all-interfaces host endpoint leaves alone; taken from the
     * model at the start of each {@link #renderAll} (its regular expressions can only exclude named endpoints).
     */
    private List<String> excludedInterfaces = List.of();

    public RuleRenderer(MarkBits marks, List<String> interfacePrefixes, Set<IpFamily> families) {
        this(marks, interfacePrefixes, families, RuleSettings.defaults());
    }

    public RuleRenderer(MarkBits marks, List<String> interfacePrefixes, Set<IpFamily> families, RuleSettings settings) {
        if (families.isEmpty()) {
            throw new IllegalArgumentException("families: at least one");
        }
        this.marks = marks;
        this.interfacePrefixes = List.copyOf(interfacePrefixes);
        if (this.interfacePrefixes.isEmpty()) {
            throw new IllegalArgumentException("interfacePrefixes: at least one");
        }
        this.families = Set.copyOf(families);
        this.settings = settings;
    }

    /** Renders the whole model for {@code families} with the model's settings. */
    public static Ruleset render(DataplaneModel model, Set<IpFamily> families) {
        return render(model, families, model.settings());
    }

    /** Renders the whole model for {@code families} with {@code settings} (e.g. another allow action). */
    public static Ruleset render(DataplaneModel model, Set<IpFamily> families, RuleSettings settings) {
        return new RuleRenderer(model.marks(), model.interfacePrefixes(), families, settings).renderAll(model);
    }

    /**
     * Renders the whole model for {@code families} with the model's settings, reusing from
     * {@code cache} every chain whose inputs are unchanged; the result equals {@link #render(DataplaneModel, Set)}'s.
     */
    public static Ruleset render(DataplaneModel model, Set<IpFamily> families, RenderCache cache) {
        return render(model, families, model.settings(), cache);
    }

    /** As {@link #render(DataplaneModel, Set, RenderCache)}, with {@code settings} instead of the model's. */
    public static Ruleset render(DataplaneModel model, Set<IpFamily> families, RuleSettings settings,
                                 RenderCache cache) {
        RuleRenderer r = new RuleRenderer(model.marks(), model.interfacePrefixes(), families, settings);
        return r.renderAll(model, cache.begin(List.of(r.marks, r.interfacePrefixes, r.families, r.settings,
                        model.config().interfaceExclude()),
                model.policyKeysVersion()));
    }

    /**
     * {@return only natOutgoing's part of the ruleset}: nat POSTROUTING's jump to {@code cali-nat-outgoing},
     * that chain and the pool (and host) sets it names, exactly as {@link #render(DataplaneModel, Set)} renders
     * them: for the eBPF driver, whose programs police but do not masquerade.
     */
    public static Ruleset renderNatOutgoing(DataplaneModel model, Set<IpFamily> families, RuleSettings settings) {
        RuleRenderer r = new RuleRenderer(model.marks(), model.interfacePrefixes(), families, settings);
        SortedMap<String, GenericChain> nat = new TreeMap<>();
        add(nat, new Rules(Names.POSTROUTING, List.of(GenericRule.of(new Target.Jump(Names.NAT_OUTGOING)))));
        add(nat, r.natOutgoingChain(model));
        return new Ruleset(r.families, java.util.Map.of(Table.NAT, nat),
                List.of(new Entry(Table.NAT, Hook.POSTROUTING, Names.POSTROUTING)),
                driverSets(model, settings.natOutgoing().excludeHosts()), Set.of());
    }

    /**
     * {@return the filter table's chains of policy {@code id}} (inbound, outbound), exactly as
     * {@link #render(DataplaneModel, Set, RuleSettings, RenderCache)} renders them: for a driver
     * that rewrites only these chains when a batch changes nothing but policies' rules.
     */
    public static List<GenericChain> policyChains(DataplaneModel model, Set<IpFamily> families, RuleSettings settings,
                                                  PolicyId id, CompiledPolicy policy) {
        return new RuleRenderer(model.marks(), model.interfacePrefixes(), families, settings).policyChains(id, policy);
    }

    /**
     * {@return every NFLOG prefix this renderer emits for {@code model} (with flow logs on), mapped
     * back to the rule hit it stands for}: what flow logs decode the kernel's NFLOG packets with.
     * Built from the same {@link NflogPrefix} functions the rendering calls, over the same model,
     * so a hashed prefix decodes exactly (tested against rendered rulesets:
     * {@code RuleRendererFlowLogsTest}).
     */
    public static HitTable hitTable(DataplaneModel model) {
        return HitTable.of(model);
    }

    private List<GenericChain> policyChains(PolicyId id, CompiledPolicy p) {
        return List.of(
                new Rules(Names.policyInbound(id), rules(p.inbound(), settings.denyTarget(),
                        logs((v, i) -> NflogPrefix.policyRule(v, true, i, id)), true)),
                new Rules(Names.policyOutbound(id), rules(p.outbound(), settings.denyTarget(),
                        logs((v, i) -> NflogPrefix.policyRule(v, false, i, id)), false)));
    }

    Ruleset renderAll(DataplaneModel model) {
        return renderAll(model, RenderCache.Round.NONE);
    }

    private Ruleset renderAll(DataplaneModel model, RenderCache.Round cache) {
        excludedInterfaces = model.config().interfaceExclude().stream()
                .filter(e -> !(e.length() > 1 && e.startsWith("/") && e.endsWith("/"))).toList();
        SortedMap<String, GenericChain> filter = new TreeMap<>();
        Set<String> refs = new TreeSet<>();
        Rules cidrBlock = cidrBlockChain(model);
        add(filter, cache.same(forwardChain(cidrBlock != null)));
        if (cidrBlock != null) {
            add(filter, cache.same(cidrBlock));
        }
        Encapsulation encap = Encapsulation.of(model);
        boolean ipip = encap.ipip();
        boolean vxlan = encap.vxlan();
        List<GenericRule> wireguardIn = wireguardRules(model.config(), true);
        List<GenericRule> wireguardOut = wireguardRules(model.config(), false);
        if (settings.kubeIpvs()) {
            add(filter, cache.same(inputChain(ipip, vxlan, encap.vxlanV6(), model.config().vxlanPort(), wireguardIn,
                    ipvsInput())));
            add(filter, cache.same(outputChain(wireguardOut, ipvsOutput())));
            kubeIpvsChains(model).forEach(c -> add(filter, cache.same(c)));
        } else {
            add(filter, cache.same(wireguardIn.isEmpty()
                    ? inputChain(ipip, vxlan, encap.vxlanV6(), model.config().vxlanPort())
                    : inputChain(ipip, vxlan, encap.vxlanV6(), model.config().vxlanPort(), wireguardIn)));
            add(filter, cache.same(wireguardOut.isEmpty() ? outputChain() : outputChain(wireguardOut)));
            if (settings.judgesEgressAtPrerouting()) {
                add(filter, cache.same(preroutingChain()));
                add(filter, cache.same(workloadEgressChain(inputVerdictsBeforeWorkloads(ipip, vxlan, encap.vxlanV6(),
                        model.config().vxlanPort(), wireguardIn))));
            }
        }
        add(filter, cache.same(workloadToHostChain()));
        add(filter, cache.same(failsafeChain(Names.FAILSAFE_IN, settings.failsafeIn(), true)));
        add(filter, cache.same(failsafeChain(Names.FAILSAFE_OUT, settings.failsafeOut(), false)));
        List<WorkloadEndpointUpdate> weps = model.workloads().values().stream()
                .filter(w -> w.interfaceName() != null && !w.interfaceName().isBlank())
                .sorted(Comparator.comparing(WorkloadEndpointUpdate::interfaceName)).toList();
        add(filter, cache.same(dispatch(Names.FROM_WL_DISPATCH, true, weps)));
        add(filter, cache.same(dispatch(Names.TO_WL_DISPATCH, false, weps)));
        Set<PolicyId> existing = model.policies().keySet();
        for (WorkloadEndpointUpdate w : weps) {
            // An endpoint's chains depend on the endpoint and on which of its policies exist.
            for (GenericChain c : cache.endpoint("workload " + w.interfaceName(), w,
                    () -> List.of(missing(w.ingress(), existing), missing(w.egress(), existing)), () -> List.of(
                    workloadChain(Names.toWorkload(w.interfaceName()), w.ingress(), w.profileIds(), true, existing,
                            cache),
                    workloadChain(Names.fromWorkload(w.interfaceName()), w.egress(), w.profileIds(), false,
                            existing, cache)))) {
                add(filter, c);
            }
        }
        SortedMap<String, HostEndpointUpdate> heps = hostEndpointsByInterface(model);
        HostEndpointUpdate any = allInterfacesEndpoint(model);
        // Every host endpoint's chains by the interface they carry; the all-interfaces one under ALL_INTERFACES.
        SortedMap<String, HostEndpointUpdate> chained = new TreeMap<>(heps);
        if (any != null) {
            chained.put(Names.ALL_INTERFACES, any);
        }
        String anyIf = any == null ? null : Names.ALL_INTERFACES;
        add(filter, cache.same(hostDispatch(Names.FROM_HOST_DISPATCH, true, heps, anyIf, Names::fromHostEndpoint)));
        add(filter, cache.same(hostDispatch(Names.TO_HOST_DISPATCH, false, heps, anyIf, Names::toHostEndpoint)));
        add(filter, cache.same(hostDispatch(Names.FROM_HEP_FORWARD_DISPATCH, true, heps, anyIf,
                Names::fromHostEndpointForward)));
        add(filter, cache.same(hostDispatch(Names.TO_HEP_FORWARD_DISPATCH, false, heps, anyIf,
                Names::toHostEndpointForward)));
        SortedMap<String, GenericChain> raw = new TreeMap<>();
        SortedMap<String, GenericChain> mangle = new TreeMap<>();
        chained.forEach((iface, h) -> {
            boolean all = iface.equals(Names.ALL_INTERFACES);
            for (GenericChain c : cache.endpoint("host endpoint " + iface, h, () -> missingOfHost(h, existing),
                    () -> List.of(
                            endpointChain(Names.fromHostEndpoint(iface), h.ingress(), h.profileIds(), true, existing,
                                    Names.FAILSAFE_IN, Kind.NORMAL, all),
                            endpointChain(Names.toHostEndpoint(iface), h.egress(), h.profileIds(), false, existing,
                                    Names.FAILSAFE_OUT, Kind.NORMAL, all),
                            endpointChain(Names.fromHostEndpointForward(iface), h.forwardIngress(), List.of(), true,
                                    existing, null, Kind.FORWARD, all),
                            endpointChain(Names.toHostEndpointForward(iface), h.forwardEgress(), List.of(), false,
                                    existing, null, Kind.FORWARD, all)))) {
                add(filter, c);
            }
            if (!h.untrackedIngress().isEmpty() || !h.untrackedEgress().isEmpty()) {
                for (GenericChain c : cache.endpoint("raw host endpoint " + iface, h, () -> missingOfHost(h, existing),
                        () -> List.of(
                                endpointChain(Names.fromHostEndpoint(iface), h.untrackedIngress(), List.of(), true,
                                        existing, Names.FAILSAFE_IN, Kind.UNTRACKED, all),
                                endpointChain(Names.toHostEndpoint(iface), h.untrackedEgress(), List.of(), false,
                                        existing, Names.FAILSAFE_OUT, Kind.UNTRACKED, all)))) {
                    add(raw, c);
                }
            }
            if (!h.preDnatIngress().isEmpty()) {
                for (GenericChain c : cache.endpoint("mangle host endpoint " + iface, h,
                        () -> missingOfHost(h, existing), () -> List.of(
                                endpointChain(Names.fromHostEndpoint(iface), h.preDnatIngress(), List.of(), true,
                                        existing, Names.FAILSAFE_IN, Kind.PRE_DNAT, all)))) {
                    add(mangle, c);
                }
            }
        });
        renderRaw(model, raw, heps, any, cache);
        renderMangle(model, mangle, heps, any, cache);
        renderManglePostrouting(model, mangle, heps, chained, any, existing, cache);
        model.policies().forEach((id, p) -> {
            if (!id.staged()) {
                cache.chains(id, List.of(p), () -> policyChains(id, p)).forEach(c -> add(filter, c));
                refs.addAll(cache.setIds(p));
            }
        });
        model.profiles().forEach((name, p) -> {
            cache.chains("profile " + name, List.of(p), () -> List.of(new Rules(Names.profileInbound(name),
                    rules(p.inbound(), settings.denyTarget(),
                            logs((v, i) -> NflogPrefix.profileRule(v, true, i, name)), true)),
                    new Rules(Names.profileOutbound(name), rules(p.outbound(), settings.denyTarget(),
                            logs((v, i) -> NflogPrefix.profileRule(v, false, i, name)), false))))
                    .forEach(c -> add(filter, c));
            refs.addAll(cache.setIds(p));
        });
        SortedMap<String, GenericChain> nat = new TreeMap<>();
        boolean fips = model.config().floatingIps();
        List<GenericRule> postrouting = new ArrayList<>();
        if (fips) {
            postrouting.add(GenericRule.of(new Target.Jump(Names.FIP_SNAT)));
            floatingIpChains(model).forEach(c -> add(nat, cache.same(c)));
        }
        postrouting.add(GenericRule.of(new Target.Jump(Names.NAT_OUTGOING)));
        add(nat, cache.same(new Rules(Names.POSTROUTING, postrouting)));
        add(nat, cache.same(natOutgoingChain(model)));
        cache.end();
        List<Entry> natEntries = fips ? List.of(new Entry(Table.NAT, Hook.PREROUTING, Names.PREROUTING),
                new Entry(Table.NAT, Hook.OUTPUT, Names.OUTPUT)) : List.of();
        return new Ruleset(families, java.util.Map.of(Table.FILTER, filter, Table.NAT, nat, Table.RAW, raw,
                Table.MANGLE, mangle), concat(natEntries, List.of(
                new Entry(Table.RAW, Hook.PREROUTING, Names.PREROUTING),
                new Entry(Table.RAW, Hook.OUTPUT, Names.OUTPUT),
                new Entry(Table.MANGLE, Hook.PREROUTING, Names.PREROUTING),
                new Entry(Table.MANGLE, Hook.POSTROUTING, Names.POSTROUTING)),
                settings.judgesEgressAtPrerouting() ? List.of(new Entry(Table.FILTER, Hook.PREROUTING, Names.PREROUTING))
                        : List.<Entry>of(), List.of(
                new Entry(Table.FILTER, Hook.FORWARD, Names.FORWARD),
                new Entry(Table.FILTER, Hook.INPUT, Names.INPUT),
                new Entry(Table.FILTER, Hook.OUTPUT, Names.OUTPUT),
                new Entry(Table.NAT, Hook.POSTROUTING, Names.POSTROUTING))),
                driverSets(model, ipip || vxlan || (encap.vxlanV6() && families.contains(IpFamily.V6))
                        || settings.natOutgoing().excludeHosts()), refs);
    }

    /**
     * The pool sets, and with encapsulation on (or natOutgoing excluding hosts) the Calico hosts' addresses plus
     * {@code externalNodesList}.
     */
    static SortedMap<String, Set<String>> driverSets(DataplaneModel model, boolean encap) {
        SortedMap<String, Set<String>> out = poolSets(model);
        if (encap) {
            Set<String> hosts = new TreeSet<>();
            model.hosts().values().forEach(h -> {
                for (String a : new String[] {h.ipv4Address(), h.ipv6Address()}) {
                    if (a != null && !a.isBlank()) {
                        calico.api.net.Cidr.tryParseCidrOrIp(a).ifPresent(c -> hosts.add(
                                calico.api.net.Cidr.of(c.address()).toString()));
                    }
                }
            });
            // externalNodesList: hosts outside the cluster treated as Calico hosts (Calico adds them to the same set)
            model.config().externalNodesCidrs().forEach(c -> calico.api.net.Cidr.tryParseCidrOrIp(c)
                    .ifPresent(p -> hosts.add(p.toString())));
            out.put(Names.ALL_HOSTS_SET, hosts);
        }
        return out;
    }

    /** How an endpoint chain treats its tiers (Calico's chain types). */
    enum Kind {
        /** filter, the host's or the workload's own traffic: conntrack, end-of-tier deny, profiles, final deny */
        NORMAL,
        /** filter, forwarded through a host endpoint: no failsafe or profiles; no policy at all allows */
        FORWARD,
        /** raw, doNotTrack: no conntrack rules; an allow also un-tracks; no verdict falls through to the rest */
        UNTRACKED,
        /** mangle PREROUTING, preDNAT: conntrack rules; no verdict falls through to the rest */
        PRE_DNAT,
        /**
         * mangle POSTROUTING, normal egress policy for DNAT'd host traffic: as NORMAL, but "allowed"
         * is RETURN with the accept mark set (mangle may still change allowed packets) and denials DROP
         */
        MANGLE_EGRESS
    }

    /**
     * raw: PREROUTING clears our marks, marks packets from workload interfaces and drops those
     * whose source does not route back out of that interface (anti-spoofing), then runs the
     * untracked ingress policy of host endpoints; OUTPUT runs untracked egress policy. Packets an
     * untracked policy allowed are un-tracked and ACCEPTed here and carry the accept mark into
     * filter, where cali-INPUT/OUTPUT/FORWARD accept them without further policy.
     */
    private void renderRaw(DataplaneModel model, SortedMap<String, GenericChain> raw,
                           SortedMap<String, HostEndpointUpdate> heps, HostEndpointUpdate any, RenderCache.Round cache) {
        Match fromWorkload = new Match.MarkAllSet(marks.scratch());
        add(raw, cache.same("raw:", new Rules(Names.PREROUTING, concat(
                List.of(GenericRule.of(new Target.ClearMark(marks.all()))),
                perPrefix(true, in -> GenericRule.of(new Target.SetMark(marks.scratch()), in)),
                spoofingAllowed(model, fromWorkload),
                List.of(GenericRule.of(Target.DROP, fromWorkload, new Match.ReversePathFails())
                        .withComment("workload source address does not route back to its interface"),
                GenericRule.of(new Target.Jump(Names.FROM_HOST_DISPATCH), new Match.MarkAllClear(marks.scratch())),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(marks.accept()))
                        .withComment("untracked policy accepted the packet"))))));
        add(raw, cache.same("raw:", new Rules(Names.OUTPUT, List.of(
                GenericRule.of(new Target.ClearMark(marks.all())),
                GenericRule.of(new Target.Jump(Names.TO_HOST_DISPATCH)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(marks.accept()))
                        .withComment("untracked policy accepted the packet")))));
        SortedMap<String, HostEndpointUpdate> in = new TreeMap<>();
        SortedMap<String, HostEndpointUpdate> out = new TreeMap<>();
        heps.forEach((i, h) -> {
            if (!h.untrackedIngress().isEmpty() || !h.untrackedEgress().isEmpty()) {
                in.put(i, h);
                out.put(i, h);
            }
        });
        String anyIf = any != null && (!any.untrackedIngress().isEmpty() || !any.untrackedEgress().isEmpty())
                ? Names.ALL_INTERFACES : null;
        add(raw, cache.same("raw:", hostDispatch(Names.FROM_HOST_DISPATCH, true, in, anyIf, Names::fromHostEndpoint)));
        add(raw, cache.same("raw:", hostDispatch(Names.TO_HOST_DISPATCH, false, out, anyIf, Names::toHostEndpoint)));
        // Before conntrack, a failsafe connection's replies must pass too (else an untracked policy could
        // un-track half of it): inbound failsafe ports' replies leave through failsafe-out, and vice versa.
        List<GenericRule> fsIn = new ArrayList<>(failsafeChain(Names.FAILSAFE_IN, settings.failsafeIn(), true).rules());
        fsIn.addAll(failsafeReplies(settings.failsafeOut(), true));
        List<GenericRule> fsOut = new ArrayList<>(failsafeChain(Names.FAILSAFE_OUT, settings.failsafeOut(), false)
                .rules());
        fsOut.addAll(failsafeReplies(settings.failsafeIn(), false));
        add(raw, cache.same("raw:", new Rules(Names.FAILSAFE_IN, fsIn)));
        add(raw, cache.same("raw:", new Rules(Names.FAILSAFE_OUT, fsOut)));
        Set<PolicyId> used = new TreeSet<>(Comparator.comparing(Names::policyKey));
        Stream.concat(in.values().stream(), Stream.ofNullable(anyIf == null ? null : any)).forEach(h -> {
            h.untrackedIngress().forEach(t -> used.addAll(t.policies()));
            h.untrackedEgress().forEach(t -> used.addAll(t.policies()));
        });
        policyCopies(model, used, raw, "raw", true, cache);
    }

    /**
     * Under {@code workloadSourceSpoofing: Any}, per workload with {@code allowSpoofedSourcePrefixes}: packets from
     * its interface with a source in those prefixes skip the anti-spoofing check that follows (Calico's
     * {@code cali-rpf-skip}); without the setting, or for any other source, nothing changes.
     */
    private List<GenericRule> spoofingAllowed(DataplaneModel model, Match fromWorkload) {
        if (!model.config().workloadSourceSpoofing()) {
            return List.of();
        }
        List<GenericRule> out = new ArrayList<>();
        new TreeMap<>(model.workloads()).values().forEach(w -> {
            for (IpFamily f : IpFamily.values()) {
                List<String> nets = w.allowSpoofedSourcePrefixes().stream().filter(c -> IpFamily.of(c) == f).toList();
                if (families.contains(f) && !nets.isEmpty() && w.interfaceName() != null) {
                    out.add(GenericRule.of(Target.RETURN, fromWorkload, new Match.Family(f),
                            new Match.Interface(true, w.interfaceName(), false), new Match.Nets(Match.Dir.SRC, nets, false))
                            .withComment("allowed spoofed source of " + w.id()));
                }
            }
        });
        return out;
    }

    /** mangle PREROUTING: preDNAT ingress policy of host endpoints, before any DNAT changes the destination. */
    private void renderMangle(DataplaneModel model, SortedMap<String, GenericChain> mangle,
                              SortedMap<String, HostEndpointUpdate> heps, HostEndpointUpdate any,
                              RenderCache.Round cache) {
        add(mangle, cache.same("mangle:", new Rules(Names.PREROUTING, List.of(
                GenericRule.of(Target.ACCEPT, new Match.Conntrack(Set.of(Match.CtState.RELATED,
                        Match.CtState.ESTABLISHED))),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(marks.accept())),
                GenericRule.of(new Target.Jump(Names.FROM_HOST_DISPATCH)),
                GenericRule.of(Target.ACCEPT, new Match.MarkAllSet(marks.accept()))
                        .withComment("pre-DNAT policy accepted the packet")))));
        SortedMap<String, HostEndpointUpdate> in = new TreeMap<>();
        heps.forEach((i, h) -> {
            if (!h.preDnatIngress().isEmpty()) {
                in.put(i, h);
            }
        });
        String anyIf = any != null && !any.preDnatIngress().isEmpty() ? Names.ALL_INTERFACES : null;
        add(mangle, cache.same("mangle:", hostDispatch(Names.FROM_HOST_DISPATCH, true, in, anyIf,
                Names::fromHostEndpoint)));
        add(mangle, cache.same("mangle:", failsafeChain(Names.FAILSAFE_IN, settings.failsafeIn(), true)));
        Set<PolicyId> used = new TreeSet<>(Comparator.comparing(Names::policyKey));
        Stream.concat(in.values().stream(), Stream.ofNullable(anyIf == null ? null : any))
                .forEach(h -> h.preDnatIngress().forEach(t -> used.addAll(t.policies())));
        policyCopies(model, used, mangle, "mangle", false, cache);
    }

    /**
     * mangle POSTROUTING: host endpoint egress policy for the host's own DNAT'd traffic, which filter
     * OUTPUT skips (its outgoing interface is only known after the reroute that follows filter
     * OUTPUT). Forwarded traffic carries the accept bit from cali-FORWARD and is left alone.
     */
    private void renderManglePostrouting(DataplaneModel model, SortedMap<String, GenericChain> mangle,
                                         SortedMap<String, HostEndpointUpdate> heps,
                                         SortedMap<String, HostEndpointUpdate> chained, HostEndpointUpdate any,
                                         Set<PolicyId> existing, RenderCache.Round cache) {
        add(mangle, cache.same("mangle:", new Rules(Names.POSTROUTING, List.of(
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(marks.accept()))
                        .withComment("forwarded, or already accepted"),
                GenericRule.of(new Target.ClearMark(marks.all())),
                GenericRule.of(new Target.Jump(Names.TO_HOST_DISPATCH), new Match.ConntrackDnat(false)),
                GenericRule.of(Target.RETURN, new Match.MarkAllSet(marks.accept()))
                        .withComment("host endpoint policy accepted the packet")))));
        add(mangle, cache.same("mangle:", hostDispatch(Names.TO_HOST_DISPATCH, false, heps,
                any == null ? null : Names.ALL_INTERFACES, Names::toHostEndpoint)));
        add(mangle, cache.same("mangle:", failsafeChain(Names.FAILSAFE_OUT, settings.failsafeOut(), false)));
        Set<PolicyId> used = new TreeSet<>(Comparator.comparing(Names::policyKey));
        Set<String> profiles = new TreeSet<>();
        chained.forEach((iface, h) -> {
            for (GenericChain c : cache.endpoint("mangle egress host endpoint " + iface, h,
                    () -> missingOfHost(h, existing), () -> List.of(endpointChain(Names.toHostEndpoint(iface),
                            h.egress(), h.profileIds(), false, existing, Names.FAILSAFE_OUT, Kind.MANGLE_EGRESS,
                            iface.equals(Names.ALL_INTERFACES))))) {
                add(mangle, c);
            }
            h.egress().forEach(t -> used.addAll(t.policies()));
            profiles.addAll(h.profileIds());
        });
        for (PolicyId id : used) {
            CompiledPolicy p = model.policies().get(id);
            if (p != null && !id.staged()) {
                cache.chains(List.of("mangle-out", id), List.of(p), () -> List.of(
                        new Rules(Names.policyOutbound(id), rules(p.outbound(), Target.DROP)))).forEach(c -> add(mangle, c));
            }
        }
        for (String name : profiles) {
            CompiledPolicy p = model.profiles().get(name);
            if (p != null) {
                cache.chains(List.of("mangle-out", "profile " + name), List.of(p), () -> List.of(
                        new Rules(Names.profileOutbound(name), rules(p.outbound(), Target.DROP))))
                        .forEach(c -> add(mangle, c));
            }
        }
    }

    /**
     * A table's own copies of the policy chains its endpoint chains jump to (iptables chains live in
     * one table); denials there are DROP (REJECT exists only in filter).
     */
    private void policyCopies(DataplaneModel model, Set<PolicyId> ids, SortedMap<String, GenericChain> table,
                              String scope, boolean outbound, RenderCache.Round cache) {
        for (PolicyId id : ids) {
            CompiledPolicy p = model.policies().get(id);
            if (p == null || id.staged()) {
                continue;
            }
            cache.chains(List.of(scope, id), List.of(p), () -> {
                List<GenericChain> cs = new ArrayList<>();
                cs.add(new Rules(Names.policyInbound(id), rules(p.inbound(), Target.DROP)));
                if (outbound) {
                    cs.add(new Rules(Names.policyOutbound(id), rules(p.outbound(), Target.DROP)));
                }
                return cs;
            }).forEach(c -> add(table, c));
        }
    }

    private static List<PolicyId> missingOfHost(HostEndpointUpdate h, Set<PolicyId> existing) {
        List<PolicyId> out = new ArrayList<>();
        for (List<TierPolicies> l : List.of(h.ingress(), h.egress(), h.untrackedIngress(), h.untrackedEgress(),
                h.preDnatIngress(), h.forwardIngress(), h.forwardEgress())) {
            out.addAll(missing(l, existing));
        }
        return out;
    }

    /** The policies of enforced tiers that the model does not hold (they render as DROP). */
    private static List<PolicyId> missing(List<TierPolicies> tiers, Set<PolicyId> existing) {
        List<PolicyId> out = new ArrayList<>();
        for (TierPolicies t : tiers) {
            for (PolicyId p : t.policies()) {
                if (!existing.contains(p)) {
                    out.add(p);
                }
            }
        }
        return out;
    }

    private static void add(SortedMap<String, GenericChain> chains, GenericChain c) {
        if (chains.put(c.name(), c) != null) {
            throw new IllegalStateException("two chains render to the name " + c.name());
        }
    }

    /**
     * The accept bit survives from raw/mangle (an untracked or pre-DNAT policy accepted the packet:
     * no applyOnForward policy then); the incoming host endpoint's forward policy, the workloads'
     * policies, then the outgoing host endpoint's forward policy.
     */
    Rules forwardChain() {
        return forwardChain(false);
    }

    /** As {@link #forwardChain()}; {@code cidrBlock}: {@code cali-cidr-block} judges the packet before any verdict. */
    Rules forwardChain(boolean cidrBlock) {
        boolean pre = settings.judgesEgressAtPrerouting();
        return new Rules(Names.FORWARD, concat(
                pre ? egressOutcome(true) : List.of(),
                List.of(GenericRule.of(new Target.ClearMark(marks.all() & ~marks.accept())),
                GenericRule.of(new Target.Jump(Names.FROM_HEP_FORWARD_DISPATCH), new Match.MarkAllClear(marks.accept()))),
                pre ? List.of() : perPrefix(true, in -> GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH), in)),
                perPrefix(false, out -> GenericRule.of(new Target.Jump(Names.TO_WL_DISPATCH), out)),
                List.of(GenericRule.of(new Target.Jump(Names.TO_HEP_FORWARD_DISPATCH))),
                cidrBlock ? List.of(GenericRule.of(new Target.Jump(Names.CIDR_BLOCK))) : List.of(),
                List.of(GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                        .withComment("policy accepted the packet"),
                GenericRule.of(new Target.SetMark(marks.accept()))
                        .withComment("forwarded: mangle POSTROUTING leaves it to the forward policy"))));
    }

    /**
     * Calico's {@code cali-cidr-block} ({@code serviceLoopPrevention}, Drop or Reject): forwarded traffic still
     * addressed to an advertised service range (kube-proxy DNATs what it handles in nat PREROUTING, before
     * filter FORWARD) is dropped or rejected, so that a service address nobody serves is not routed back out
     * (a loop between BGP peers). {@return the chain}, null when there is nothing to guard or it is Disabled.
     */
    Rules cidrBlockChain(DataplaneModel model) {
        String mode = model.config().serviceLoopPrevention();
        if (model.serviceCidrs().isEmpty() || "Disabled".equals(mode)) {
            return null;
        }
        Target verdict = "Reject".equals(mode) ? Target.REJECT : Target.DROP;
        List<GenericRule> rules = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            List<String> cidrs = model.serviceCidrs().stream().filter(c -> IpFamily.of(c) == f).toList();
            if (families.contains(f) && !cidrs.isEmpty()) {
                rules.add(GenericRule.of(verdict, new Match.Family(f), new Match.Nets(Match.Dir.DST, cidrs, false))
                        .withComment("service address not DNAT'd (serviceLoopPrevention)"));
            }
        }
        return new Rules(Names.CIDR_BLOCK, rules);
    }

    /** Workload traffic to the host goes (goto, so its verdicts end INPUT's processing by us) to cali-wl-to-host. */
    Rules inputChain() {
        return inputChain(false, false, Names.VXLAN_PORT);
    }

    Rules inputChain(boolean ipip, boolean vxlan, int vxlanPort) {
        return inputChain(ipip, vxlan, false, vxlanPort);
    }

    /**
     * With IPIP (VXLAN) on an enabled pool, IPv4 IPIP (UDP 4789) to this host is accepted only from
     * Calico hosts ({@code all-hosts-net}) and dropped from anyone else, before any policy; with
     * IPv6 VXLAN on, the same for IPv6 UDP to the VXLAN port (Calico's IPv6 input chain).
     */
    Rules inputChain(boolean ipip, boolean vxlan, boolean vxlanV6, int vxlanPort) {
        return inputChain(ipip, vxlan, vxlanV6, vxlanPort, List.of());
    }

    /** As above, with {@code wireguard} ({@link #wireguardRules}) after the encapsulation rules, before any policy. */
    Rules inputChain(boolean ipip, boolean vxlan, boolean vxlanV6, int vxlanPort, List<GenericRule> wireguard) {
        return inputChain(ipip, vxlan, vxlanV6, vxlanPort, wireguard, List.of());
    }

    /** As above, with {@code ipvs} ({@link #ipvsInput}) after {@code wireguard}. */
    Rules inputChain(boolean ipip, boolean vxlan, boolean vxlanV6, int vxlanPort, List<GenericRule> wireguard,
                     List<GenericRule> ipvs) {
        List<GenericRule> rules = new ArrayList<>(inputVerdictsBeforeWorkloads(ipip, vxlan, vxlanV6, vxlanPort,
                wireguard));
        rules.addAll(ipvs);
        rules.addAll(perPrefix(true, in -> GenericRule.of(new Target.Goto(Names.WL_TO_HOST), in)));
        rules.addAll(List.of(
                GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                        .withComment("untracked or pre-DNAT policy accepted the packet"),
                GenericRule.of(new Target.ClearMark(marks.all())),
                GenericRule.of(new Target.Jump(Names.FROM_HOST_DISPATCH)),
                GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                        .withComment("host endpoint policy accepted the packet")));
        return new Rules(Names.INPUT, rules);
    }

    /**
     * INPUT's verdicts that come before a workload's traffic goes to {@link Names#WL_TO_HOST} (IPIP and VXLAN from
     * Calico hosts or others, WireGuard): each final, none judged by a workload's egress policy.
     */
    List<GenericRule> inputVerdictsBeforeWorkloads(boolean ipip, boolean vxlan, boolean vxlanV6, int vxlanPort,
                                                   List<GenericRule> wireguard) {
        List<GenericRule> encap = new ArrayList<>();
        if (families.contains(IpFamily.V4)) {
            Match fromHosts = new Match.InSet(Dir.SRC, IpFamily.V4, Names.ALL_HOSTS_SET, false);
            if (ipip) {
                encap.add(GenericRule.of(settings.allowTarget(), new Match.Family(IpFamily.V4),
                        new Match.Protocol("4", false), fromHosts, new Match.DstLocal(false))
                        .withComment("IPIP from Calico hosts"));
                encap.add(GenericRule.of(settings.denyTarget(), new Match.Family(IpFamily.V4),
                        new Match.Protocol("4", false)).withComment("IPIP from other hosts"));
            }
            if (vxlan) {
                encap.addAll(vxlanInput(IpFamily.V4, vxlanPort));
            }
        }
        if (families.contains(IpFamily.V6) && vxlanV6) {
            encap.addAll(vxlanInput(IpFamily.V6, vxlanPort));
        }
        encap.addAll(wireguard);
        return encap;
    }

    /**
     * kube-proxy in IPVS mode: IPVS takes NodePort and service traffic in INPUT and sends it on through OUTPUT, so
     * it never passes FORWARD. INPUT sorts out what is really forwarded ({@link Names#FORWARD_CHECK}), marks it
     * with its incoming endpoint's mark and leaves it to OUTPUT ({@link #ipvsOutput}); the rest goes on to host
     * and workload-to-host policy as usual.
     */
    List<GenericRule> ipvsInput() {
        return List.of(GenericRule.of(new Target.ClearMark(marks.endpoint())),
                GenericRule.of(new Target.Jump(Names.FORWARD_CHECK)),
                GenericRule.of(Target.RETURN, new Match.MarkAnySet(marks.endpoint()))
                        .withComment("forwarded (IPVS): policed in OUTPUT by its endpoint mark"));
    }

    /** OUTPUT: a packet INPUT marked as forwarded gets the forward treatment ({@link Names#FORWARD_ENDPOINT_MARK}). */
    List<GenericRule> ipvsOutput() {
        return List.of(GenericRule.of(new Target.Goto(Names.FORWARD_ENDPOINT_MARK),
                new Match.MarkAnySet(marks.endpoint())).withComment("forwarded through IPVS"));
    }

    /**
     * The chains of kube-proxy's IPVS mode, as Calico's (its names, its order):
     * <ul>
     *   <li>{@code cali-forward-check}: an established connection is not re-judged; TCP and UDP to a port of
     *   {@code kubeNodePortRanges} on one of this host's addresses is a NodePort, forwarded; so is anything to an
     *   address not this host's;</li>
     *   <li>{@code cali-set-endpoint-mark}: the incoming interface's endpoint mark (a workload interface felix does
     *   not know yet: denied; no endpoint's interface: the non-Calico mark);</li>
     *   <li>{@code cali-from-endpoint-mark}: the marked endpoint's policy as the packet's source (a workload's
     *   egress, a host endpoint's applyOnForward ingress); none for the non-Calico mark; an unknown mark: denied;</li>
     *   <li>{@code cali-forward-endpoint-mark}: that, then the destination workload's ingress or host endpoint's
     *   applyOnForward egress, as FORWARD does; the endpoint mark cleared; accepted when policy accepted.</li>
     * </ul>
     * This host's addresses are the kernel's local ones (Calico keeps a set of the interfaces' addresses without
     * {@code kube-ipvs0}'s: see felix-service/design/rules.md).
     */
    List<GenericChain> kubeIpvsChains(DataplaneModel model) {
        SortedMap<String, String> fromChains = new TreeMap<>();
        model.workloads().values().stream().map(WorkloadEndpointUpdate::interfaceName)
                .filter(i -> i != null && !i.isBlank()).forEach(i -> fromChains.put(i, Names.fromWorkload(i)));
        hostEndpointsByInterface(model).keySet().forEach(i -> fromChains.putIfAbsent(i,
                Names.fromHostEndpointForward(i)));
        EndpointMarks em = EndpointMarks.allocate(marks, fromChains.keySet());
        List<GenericChain> out = new ArrayList<>();
        List<GenericRule> check = new ArrayList<>();
        check.add(GenericRule.of(Target.RETURN, new Match.Conntrack(Set.of(Match.CtState.RELATED,
                Match.CtState.ESTABLISHED))));
        if (!settings.nodePorts().isEmpty()) {
            for (String proto : List.of("tcp", "udp")) {
                check.add(GenericRule.of(new Target.Goto(Names.SET_ENDPOINT_MARK), new Match.Protocol(proto, false),
                        new Match.Ports(Dir.DST, settings.nodePorts(), false), new Match.DstLocal(false))
                        .withComment("To kubernetes NodePort service"));
            }
        }
        check.add(GenericRule.of(new Target.Jump(Names.SET_ENDPOINT_MARK), new Match.DstLocal(true))
                .withComment("To kubernetes service"));
        out.add(new Rules(Names.FORWARD_CHECK, check));
        List<GenericRule> setMark = new ArrayList<>();
        List<GenericRule> fromMark = new ArrayList<>();
        fromMark.add(GenericRule.of(Target.RETURN, new Match.MarkEquals(em.nonCalico(), em.mask()))
                .withComment("from no endpoint: no source policy"));
        em.byName().forEach((iface, mark) -> {
            String sm = Names.setEndpointMark(iface);
            setMark.add(GenericRule.of(new Target.Goto(sm), new Match.Interface(true, iface, false)));
            out.add(new Rules(sm, List.of(GenericRule.of(new Target.SetMark(mark)))));
            fromMark.add(GenericRule.of(new Target.Goto(fromChains.get(iface)), new Match.MarkEquals(mark, em.mask())));
        });
        setMark.addAll(perPrefix(true, in -> GenericRule.of(settings.denyTarget(), in).withComment("Unknown endpoint")));
        setMark.add(GenericRule.of(new Target.SetMark(em.nonCalico())).withComment("Non-Cali endpoint mark"));
        fromMark.add(GenericRule.of(settings.denyTarget()).withComment("Unknown interface"));
        out.add(new Rules(Names.SET_ENDPOINT_MARK, setMark));
        out.add(new Rules(Names.FROM_ENDPOINT_MARK, fromMark));
        out.add(new Rules(Names.FORWARD_ENDPOINT_MARK, concat(
                List.of(GenericRule.of(new Target.Jump(Names.FROM_ENDPOINT_MARK))),
                perPrefix(false, o -> GenericRule.of(new Target.Jump(Names.TO_WL_DISPATCH), o)),
                List.of(GenericRule.of(new Target.Jump(Names.TO_HEP_FORWARD_DISPATCH)),
                        GenericRule.of(new Target.ClearMark(marks.endpoint())),
                        GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                                .withComment("Policy explicitly accepted packet.")))));
        return out;
    }

    /**
     * With WireGuard of a family on, its UDP port is allowed before any host endpoint policy, as in
     * Calico (a host policy could otherwise cut the tunnel): {@code inbound}, to a local address
     * ("Allow incoming IPv4/IPv6 Wireguard packets"); outbound, to the port (OUTPUT only sees this
     * host's packets, so Calico's local-source match adds nothing here). Peers are limited by the
     * device's keys and allowed IPs, not here.
     */
    List<GenericRule> wireguardRules(calico.felix.calc.FelixSettings c, boolean inbound) {
        List<GenericRule> rules = new ArrayList<>();
        for (IpFamily f : families) {
            boolean on = f == IpFamily.V4 ? c.wireguardEnabled() : c.wireguardEnabledV6();
            if (!on) {
                continue;
            }
            int port = f == IpFamily.V4 ? c.wireguardListeningPort() : c.wireguardListeningPortV6();
            List<Match> m = new ArrayList<>(List.of(new Match.Family(f), new Match.Protocol("udp", false),
                    new Match.Ports(Dir.DST, List.of(Integer.toString(port)), false)));
            if (inbound) {
                m.add(new Match.DstLocal(false));
            }
            rules.add(GenericRule.of(settings.allowTarget(), m.toArray(Match[]::new)).withComment(
                    (inbound ? "Allow incoming " : "Allow outgoing ") + (f == IpFamily.V4 ? "IPv4" : "IPv6") + " Wireguard packets"));
        }
        return rules;
    }

    /** VXLAN of {@code family} to this host: accepted from Calico hosts, dropped from anyone else. */
    private List<GenericRule> vxlanInput(IpFamily family, int vxlanPort) {
        Match port = new Match.Ports(Dir.DST, List.of(Integer.toString(vxlanPort)), false);
        Match fromHosts = new Match.InSet(Dir.SRC, family, Names.ALL_HOSTS_SET, false);
        String v = family == IpFamily.V4 ? "" : "IPv6 ";
        return List.of(
                GenericRule.of(settings.allowTarget(), new Match.Family(family), new Match.Protocol("udp", false), port,
                        fromHosts, new Match.DstLocal(false)).withComment(v + "VXLAN from Calico hosts"),
                GenericRule.of(Target.DROP, new Match.Family(family), new Match.Protocol("udp", false), port,
                        new Match.DstLocal(false)).withComment(v + "VXLAN from other hosts"));
    }

    /**
     * Host-to-workload traffic is not policed (as in Calico: probes from the host must work). DNAT'd
     * traffic skips host endpoint egress policy: its outgoing interface is still the one routed to
     * before DNAT (e.g. a service address DNAT'd to a local workload).
     */
    Rules outputChain() {
        return outputChain(List.of());
    }

    /** As above, with {@code wireguard} ({@link #wireguardRules}) after the workload returns, before host endpoint policy. */
    Rules outputChain(List<GenericRule> wireguard) {
        return outputChain(wireguard, List.of());
    }

    /** As above, with {@code ipvs} ({@link #ipvsOutput}) right after the accepted packets. */
    Rules outputChain(List<GenericRule> wireguard, List<GenericRule> ipvs) {
        return new Rules(Names.OUTPUT, concat(
                List.of(GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                        .withComment("untracked policy accepted the packet")),
                ipvs,
                perPrefix(false, out -> GenericRule.of(Target.RETURN, out)),
                wireguard,
                List.of(GenericRule.of(new Target.ClearMark(marks.all())),
                // RETURN on DNAT rather than "jump unless DNAT": nft's ct expressions never match a packet
                // without a conntrack entry (an untracked reply), iptables' "! --ctstate DNAT" would.
                GenericRule.of(Target.RETURN, new Match.ConntrackDnat(false))
                        .withComment("DNAT'd: the outgoing interface is not known yet"),
                GenericRule.of(new Target.Jump(Names.TO_HOST_DISPATCH)),
                GenericRule.of(settings.allowTarget(), new Match.MarkAllSet(marks.accept()))
                        .withComment("host endpoint policy accepted the packet"))));
    }

    /**
     * The workload's egress policy (the from-workload dispatch returns when it allows), then the
     * configured action. IPv6 neighbour discovery, router solicitation and MLD to the host are
     * allowed first, whatever the policy: without them a workload cannot reach its gateway.
     */
    Rules workloadToHostChain() {
        List<GenericRule> rules = new ArrayList<>();
        if (families.contains(IpFamily.V6)) {
            for (int type : ICMPV6_TO_HOST) {
                rules.add(GenericRule.of(settings.allowTarget(), new Match.Family(IpFamily.V6),
                        new Match.Protocol("ipv6-icmp", false), new Match.Icmp(IpFamily.V6, type, null, false)));
            }
        }
        if (settings.judgesEgressAtPrerouting()) {
            rules.addAll(egressOutcome(false));
        } else {
            rules.add(GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH)));
        }
        Target action = switch (settings.endpointToHostAction()) {
            case DROP -> Target.DROP;
            case RETURN -> Target.RETURN;
            case ACCEPT -> settings.allowTarget();
        };
        rules.add(GenericRule.of(action).withComment("defaultEndpointToHostAction"));
        return new Rules(Names.WL_TO_HOST, rules);
    }

    /** nftables: filter PREROUTING (after DNAT) sends workloads' traffic to {@link Names#WL_EGRESS}. */
    Rules preroutingChain() {
        return new Rules(Names.PREROUTING, perPrefix(true, in -> GenericRule.of(new Target.Goto(Names.WL_EGRESS), in)));
    }

    /**
     * A workload's egress policy, judged once at prerouting after DNAT for forwarded and host-bound traffic alike
     * (rules.md §2b): the kernel then validates the workloads' egress chains from one base chain instead of from
     * FORWARD and INPUT both. The outcome stays in the marks, which nothing of ours touches before FORWARD or
     * INPUT: scratch and pass both set: not judged (what INPUT decides before a workload's policy, {@code
     * inputFirst}, and neighbour discovery to the host, which cali-wl-to-host allows whatever the policy);
     * scratch alone: the egress chain accepted (established or related: its verdict ended this chain); scratch
     * clear: the chain returned, with the accept bit as it left it. A denial dropped or rejected the packet here.
     */
    Rules workloadEgressChain(List<GenericRule> inputFirst) {
        List<GenericRule> rules = new ArrayList<>();
        rules.add(GenericRule.of(new Target.SetMark(marks.pass() | marks.scratch())).withComment("not judged yet"));
        if (families.contains(IpFamily.V6)) {
            for (Match to : List.of(new Match.DstLocal(false), new Match.Nets(Dir.DST, List.of("ff00::/8"), false))) {
                for (int type : ICMPV6_TO_HOST) {
                    rules.add(GenericRule.of(Target.RETURN, new Match.Family(IpFamily.V6),
                            new Match.Protocol("ipv6-icmp", false), new Match.Icmp(IpFamily.V6, type, null, false), to)
                            .withComment("to the host: cali-wl-to-host allows it"));
                }
            }
        }
        for (GenericRule r : inputFirst) {
            List<Match> m = new ArrayList<>(r.matches());
            if (!m.contains(new Match.DstLocal(false))) {
                m.add(new Match.DstLocal(false));
            }
            rules.add(GenericRule.of(Target.RETURN, m.toArray(Match[]::new))
                    .withComment("INPUT decides it before any workload policy"));
        }
        rules.add(GenericRule.of(new Target.Jump(Names.FROM_WL_DISPATCH)));
        rules.add(GenericRule.of(new Target.ClearMark(marks.scratch())).withComment("judged"));
        return new Rules(Names.WL_EGRESS, rules);
    }

    /**
     * FORWARD's and cali-wl-to-host's reading of {@link #workloadEgressChain}'s outcome, in place of the jump to the
     * from-workload dispatch: accepted there (established) is allowed here as the egress chain's verdict would have;
     * not judged is dropped (only what cannot come here is left unjudged: fail closed); judged and returned goes
     * on, as after the jump's return. {@code forward}: each rule limited to workload interfaces.
     */
    private List<GenericRule> egressOutcome(boolean forward) {
        List<GenericRule> accepted = List.of(GenericRule.of(settings.allowTarget(),
                new Match.MarkEquals(marks.scratch(), marks.scratch() | marks.pass()))
                .withComment("the workload's egress chain accepted it at prerouting"));
        List<GenericRule> unjudged = List.of(GenericRule.of(Target.DROP, new Match.MarkAllSet(marks.scratch()))
                .withComment("from a workload, not judged at prerouting"));
        if (!forward) {
            return concat(accepted, unjudged);
        }
        return concat(perPrefix(true, in -> withMatch(accepted.get(0), in)),
                perPrefix(true, in -> withMatch(unjudged.get(0), in)));
    }

    private static GenericRule withMatch(GenericRule r, Match first) {
        List<Match> m = new ArrayList<>(List.of(first));
        m.addAll(r.matches());
        return new GenericRule(m, r.target(), r.comment());
    }

    /**
     * Failsafe ports: inbound matches the destination port (a service on this host) and the
     * source net, outbound the destination port and net. Always ACCEPT (a RETURN would fall back
     * into the endpoint's policy). A port with a net serves only that net's family.
     */
    Rules failsafeChain(String name, List<ProtoPort> ports, boolean inbound) {
        return new Rules(name, failsafeRules(ports, inbound, Dir.DST, "failsafe "));
    }

    /**
     * The failsafe ports' accepts for a driver that places them itself (eBPF): inbound
     * ({@code failsafeInboundHostPorts}) or outbound, and with {@code replies} also the replies of
     * the other direction's failsafe connections (where conntrack has not run yet, as raw's).
     */
    public List<GenericRule> failsafes(boolean inbound, boolean replies) {
        List<GenericRule> out = new ArrayList<>(failsafeRules(inbound ? settings.failsafeIn() : settings.failsafeOut(),
                inbound, Dir.DST, "failsafe "));
        if (replies) {
            out.addAll(failsafeReplies(inbound ? settings.failsafeOut() : settings.failsafeIn(), inbound));
        }
        return out;
    }

    /**
     * raw only: replies of failsafe connections (source port = the failsafe port), so that an
     * untracked policy never sees them. {@code inbound}: replies coming in (of outbound failsafe
     * connections; net = their source); else going out (of inbound ones; net = their destination).
     */
    List<GenericRule> failsafeReplies(List<ProtoPort> ports, boolean inbound) {
        return failsafeRules(ports, inbound, Dir.SRC, "failsafe reply ");
    }

    /** One ACCEPT per failsafe port in {@code families}: the port on {@code portSide}, the net on the far side. */
    private List<GenericRule> failsafeRules(List<ProtoPort> ports, boolean inbound, Dir portSide, String comment) {
        List<GenericRule> rules = new ArrayList<>();
        for (ProtoPort p : ports) {
            if (p.port() == null) {
                continue;
            }
            List<Match> m = new ArrayList<>();
            String proto = p.protocol() == null ? "tcp" : p.protocol().toLowerCase(Locale.ROOT);
            if (p.net() != null && !p.net().isBlank()) {
                IpFamily f = IpFamily.of(p.net());
                if (!families.contains(f)) {
                    continue;
                }
                m.add(new Match.Family(f));
                m.add(new Match.Protocol(proto, false));
                m.add(new Match.Nets(inbound ? Dir.SRC : Dir.DST, List.of(p.net()), false));
            } else {
                m.add(new Match.Protocol(proto, false));
            }
            m.add(new Match.Ports(portSide, List.of(Integer.toString(p.port())), false));
            rules.add(new GenericRule(m, Target.ACCEPT, comment + proto + ":" + p.port()));
        }
        return rules;
    }

    /** Unknown interfaces of ours are dropped: an endpoint without its chains must not pass. */
    static Dispatch dispatch(String name, boolean in, List<WorkloadEndpointUpdate> weps) {
        SortedMap<String, String> targets = new TreeMap<>();
        weps.forEach(w -> targets.put(w.interfaceName(),
                in ? Names.fromWorkload(w.interfaceName()) : Names.toWorkload(w.interfaceName())));
        return new Dispatch(name, in, targets, Target.DROP);
    }

    /**
     * Interfaces without a host endpoint go to the all-interfaces endpoint's chain ({@code anyIf}
     * non-null), else fall through (null fallback): we do not touch their traffic.
     */
    static Dispatch hostDispatch(String name, boolean in, SortedMap<String, HostEndpointUpdate> heps, String anyIf,
                                 java.util.function.UnaryOperator<String> chainOf) {
        SortedMap<String, String> targets = new TreeMap<>();
        heps.keySet().forEach(i -> targets.put(i, chainOf.apply(i)));
        return new Dispatch(name, in, targets, anyIf == null ? null : new Target.Goto(chainOf.apply(anyIf)));
    }

    /** The all-interfaces ({@code interfaceName: "*"}) host endpoint, the first by ID; null when there is none. */
    static HostEndpointUpdate allInterfacesEndpoint(DataplaneModel model) {
        return model.hostEndpoints().values().stream().filter(h -> "*".equals(h.interfaceName())).findFirst()
                .orElse(null);
    }

    /**
     * Host endpoints by interface. Endpoints without an interface name (matched by expected IPs)
     * are not rendered, the all-interfaces {@code *} one is not listed here, nor one on an interface
     * {@code interfaceExclude} names; of two endpoints on one interface the first by ID wins
     * (deterministic, so renders stay comparable).
     */
    static SortedMap<String, HostEndpointUpdate> hostEndpointsByInterface(DataplaneModel model) {
        SortedMap<String, HostEndpointUpdate> out = new TreeMap<>();
        model.hostEndpoints().values().forEach(h -> {
            String i = h.interfaceName();
            if (i != null && !i.isBlank() && !i.equals("*") && !model.config().isExcludedInterface(i)) {
                out.putIfAbsent(i, h);
            }
        });
        return out;
    }

    /** Driver sets for NAT: every pool's CIDR, and the natOutgoing ones; absent when there are no pools. */
    static SortedMap<String, Set<String>> poolSets(DataplaneModel model) {
        SortedMap<String, Set<String>> out = new TreeMap<>();
        if (model.pools().isEmpty()) {
            return out;
        }
        Set<String> all = new TreeSet<>();
        Set<String> masq = new TreeSet<>();
        model.pools().values().forEach(p -> {
            if (p.cidr() == null || p.cidr().isBlank()) {
                return;
            }
            all.add(p.cidr());
            if (p.natOutgoing()) {
                masq.add(p.cidr());
            }
        });
        out.put(Names.ALL_POOLS_SET, all);
        out.put(Names.MASQ_POOLS_SET, masq);
        return out;
    }

    /**
     * Per rendered family that has a natOutgoing pool, Calico's {@code cali-nat-outgoing}: traffic from
     * a natOutgoing pool to no pool (disabled pools count: {@code all-ipam-pools} holds every pool),
     * and with {@code IPPoolsAndHostIPs} to no Calico host, is masqueraded, fully random. With
     * {@code natPortRange}, TCP and UDP first get ports from the range and return; the rest is
     * masqueraded without one. Empty when no pool of the family has natOutgoing.
     */
    Rules natOutgoingChain(DataplaneModel model) {
        Set<String> masq = poolSets(model).getOrDefault(Names.MASQ_POOLS_SET, Set.of());
        NatOutgoing nat = settings.natOutgoing();
        List<GenericRule> rules = new ArrayList<>();
        for (IpFamily f : IpFamily.values()) {
            if (!families.contains(f) || masq.stream().noneMatch(c -> IpFamily.of(c) == f)) {
                continue;
            }
            List<Match> leaving = new ArrayList<>(List.of(new Match.Family(f),
                    new Match.InSet(Dir.SRC, f, Names.MASQ_POOLS_SET, false),
                    new Match.InSet(Dir.DST, f, Names.ALL_POOLS_SET, true)));
            if (nat.excludeHosts()) {
                leaving.add(new Match.InSet(Dir.DST, f, Names.ALL_HOSTS_SET, true));
            }
            if (nat.maxPort() > 0) {
                for (String proto : List.of("tcp", "udp")) {
                    List<Match> m = new ArrayList<>(leaving);
                    m.add(new Match.Protocol(proto, false));
                    rules.add(new GenericRule(m, nat.masquerade(true), "natOutgoing"));
                    rules.add(new GenericRule(m, Target.RETURN, "natOutgoing"));
                }
            }
            rules.add(new GenericRule(leaving, nat.masquerade(false), "natOutgoing"));
        }
        return new Rules(Names.NAT_OUTGOING, rules);
    }

    /**
     * nat table with {@code floatingIPs: Enabled}: Calico's {@code cali-fip-dnat} (from cali-PREROUTING
     * and cali-OUTPUT) sends each local workload's external IP to its internal one, and
     * {@code cali-fip-snat} (first in cali-POSTROUTING) rewrites a workload's hairpin (its own
     * internal address reached through its floating IP) to come from the external IP, so the reply
     * returns through conntrack. Rendered families only, in workload order.
     */
    List<Rules> floatingIpChains(DataplaneModel model) {
        List<GenericRule> dnat = new ArrayList<>();
        List<GenericRule> snat = new ArrayList<>();
        new TreeMap<>(model.workloads()).forEach((id, w) -> w.floatingIps().forEach(fip -> {
            IpFamily f = fip.external().contains(":") ? IpFamily.V6 : IpFamily.V4;
            if (!families.contains(f) || (fip.internal().contains(":") != (f == IpFamily.V6))) {
                return;
            }
            String bits = f == IpFamily.V6 ? "/128" : "/32";
            dnat.add(new GenericRule(List.of(new Match.Family(f),
                    new Match.Nets(Dir.DST, List.of(fip.external() + bits), false)),
                    new Target.Dnat(fip.internal()), "floating IP of " + id));
            snat.add(new GenericRule(List.of(new Match.Family(f),
                    new Match.Nets(Dir.SRC, List.of(fip.internal() + bits), false),
                    new Match.Nets(Dir.DST, List.of(fip.internal() + bits), false)),
                    new Target.Snat(fip.external()), "floating IP of " + id));
        }));
        return List.of(new Rules(Names.FIP_DNAT, dnat), new Rules(Names.FIP_SNAT, snat),
                new Rules(Names.PREROUTING, List.of(GenericRule.of(new Target.Jump(Names.FIP_DNAT)))),
                new Rules(Names.OUTPUT, List.of(GenericRule.of(new Target.Jump(Names.FIP_DNAT)))));
    }

    /**
     * A workload endpoint's chain for one direction: its rules depend only on the tiers, the
     * profiles, the direction and which of its policies are missing, so endpoints alike share them.
     */
    private Rules workloadChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                                Set<PolicyId> existing, RenderCache.Round cache) {
        return new Rules(name, cache.endpointBody(List.of(inbound, tiers, profiles, missing(tiers, existing)),
                () -> endpointChain(name, tiers, profiles, inbound, existing).rules()));
    }

    public Rules endpointChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                               Set<PolicyId> existing) {
        return endpointChain(name, tiers, profiles, inbound, existing, null);
    }

    public Rules endpointChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                               Set<PolicyId> existing, String failsafe) {
        return endpointChain(name, tiers, profiles, inbound, existing, failsafe, Kind.NORMAL, false);
    }

    /**
     * One direction of an endpoint.
     *
     * @param inbound      towards the endpoint (its ingress): policies' and profiles' inbound chains
     * @param existing     policies the model holds; a listed policy missing from it fails closed (deny)
     * @param failsafe     a failsafe chain jumped to after the conntrack rules (host endpoints), or null
     * @param kind         the chain type (filter normal or forward, raw untracked, mangle pre-DNAT)
     * @param allInterfaces the all-interfaces host endpoint's chain: workload interfaces return first
     */
    Rules endpointChain(String name, List<TierPolicies> tiers, List<String> profiles, boolean inbound,
                        Set<PolicyId> existing, String failsafe, Kind kind, boolean allInterfaces) {
        Match passClear = new Match.MarkAllClear(marks.pass());
        Match acceptSet = new Match.MarkAllSet(marks.accept());
        // A policy's jump is skipped once the tier has an answer (pass, or accept: returned at the
        // tier's end), so the chain needs no return after every jump: nftables validates every
        // endpoint chain on each path from a base chain at each commit, so fewer rules walk faster.
        // Untracked chains keep a return per policy: their accept also needs the notrack rule.
        boolean compact = kind != Kind.UNTRACKED;
        Match undecided = compact ? new Match.MarkAllClear(marks.both()) : passClear;
        boolean filter = kind == Kind.NORMAL || kind == Kind.FORWARD;
        boolean normal = kind == Kind.NORMAL || kind == Kind.MANGLE_EGRESS;
        Target deny = filter ? settings.denyTarget() : Target.DROP;
        // Flow logs: the filter table's verdicts log first (Calico logs neither raw nor mangle copies).
        boolean logHere = settings.flowLogs() && (kind == Kind.NORMAL || kind == Kind.FORWARD);
        List<GenericRule> rules = new ArrayList<>();
        if (allInterfaces) {
            // Calico's all-interfaces endpoint covers the host's interfaces, never a workload's.
            rules.addAll(perPrefix(inbound, i -> GenericRule.of(Target.RETURN, i)
                    .withComment("workload interfaces are not host endpoints")));
            for (String excluded : excludedInterfaces) {
                rules.add(GenericRule.of(Target.RETURN, new Match.Interface(inbound, excluded, false))
                        .withComment("interfaceExclude"));
            }
        }
        rules.add(GenericRule.of(new Target.ClearMark(marks.both())));
        if (kind == Kind.MANGLE_EGRESS) {
            rules.add(GenericRule.of(new Target.SetMark(marks.accept()),
                    new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED))));
        }
        if (kind != Kind.UNTRACKED) {
            rules.add(GenericRule.of(filter ? settings.allowTarget() : kind == Kind.MANGLE_EGRESS ? Target.RETURN
                            : Target.ACCEPT,
                    new Match.Conntrack(Set.of(Match.CtState.RELATED, Match.CtState.ESTABLISHED))));
            rules.add(GenericRule.of(deny, new Match.Conntrack(Set.of(Match.CtState.INVALID))));
        }
        if (failsafe != null) {
            rules.add(GenericRule.of(new Target.Jump(failsafe)));
        }
        EndpointWalk.walk(tiers, normal ? profiles : List.of(), existing, new EndpointWalk() {
            /** Whether the current tier jumped to a policy (compact: it returns on accept at its end). */
            private boolean jumped;

            @Override
            public void tierStart(TierPolicies tier) {
                rules.add(GenericRule.of(new Target.ClearMark(marks.pass())).withComment("start of tier " + tier.tier()));
                jumped = false;
            }

            @Override
            public void missingPolicy(PolicyId p) {
                if (logHere) {
                    rules.add(nflog(inbound, NflogPrefix.missingPolicy(inbound, p), undecided));
                }
                rules.add(GenericRule.of(deny, undecided).withComment("missing policy " + p.sortName()));
            }

            @Override
            public void policy(PolicyId p) {
                String target = inbound ? Names.policyInbound(p) : Names.policyOutbound(p);
                rules.add(GenericRule.of(new Target.Jump(target), undecided));
                if (compact) {
                    jumped = true;
                    return;
                }
                rules.add(GenericRule.of(new Target.NoTrack(), acceptSet).withComment("untracked allow"));
                rules.add(GenericRule.of(Target.RETURN, acceptSet));
            }

            @Override
            public void tierEnd(TierPolicies tier, Action def) {
                if (jumped) {
                    rules.add(GenericRule.of(Target.RETURN, acceptSet));
                }
                // Untracked and pre-DNAT policy that decides nothing leaves the packet to the filter table's policy.
                if (def != Action.Pass && (filter || normal)) {
                    if (logHere) {
                        rules.add(nflog(inbound, NflogPrefix.endOfTier(Verdict.DENY, inbound, tier.tier()), passClear));
                    }
                    rules.add(GenericRule.of(deny, passClear).withComment("end of tier " + tier.tier()));
                } else if (def == Action.Pass && logHere) {
                    rules.add(nflog(inbound, NflogPrefix.endOfTier(Verdict.PASS, inbound, tier.tier()), passClear));
                }
            }

            @Override
            public void tiersDone(boolean anyTier) {
                if (kind == Kind.FORWARD && !anyTier) {
                    rules.add(GenericRule.of(new Target.SetMark(marks.accept()))
                            .withComment("no applyOnForward policy: forwarded traffic is allowed"));
                    rules.add(GenericRule.of(Target.RETURN));
                }
            }

            @Override
            public void profile(String profile) {
                rules.add(GenericRule.of(new Target.Jump(inbound ? Names.profileInbound(profile)
                        : Names.profileOutbound(profile))));
                rules.add(GenericRule.of(Target.RETURN, acceptSet));
            }

            @Override
            public void end() {
                if (normal) {
                    if (logHere) {
                        rules.add(nflog(inbound, NflogPrefix.noProfileMatched(inbound)));
                    }
                    rules.add(GenericRule.of(deny).withComment("no policy or profile accepted"));
                }
            }
        });
        return new Rules(name, rules);
    }

    /** A policy's or profile's rules for one direction, in order. */
    public List<GenericRule> rules(List<CompiledRule> compiled) {
        return rules(compiled, settings.denyTarget());
    }

    /** The same, with {@code deny} for Deny rules (DROP outside the filter table). */
    public List<GenericRule> rules(List<CompiledRule> compiled, Target deny) {
        return rules(compiled, deny, null, true);
    }

    /** How the rules of one policy direction name their NFLOG hits: (verdict, rule index) to prefix. */
    interface HitPrefixes {
        String prefix(Verdict v, int ruleIndex);
    }

    /** {@code p} when flow logs are on, else null (no NFLOG rules at all). */
    private HitPrefixes logs(HitPrefixes p) {
        return settings.flowLogs() ? p : null;
    }

    /**
     * A direction's rules; with {@code log} non-null each rule with a verdict logs to NFLOG right
     * before it. Only a connection's first packet gets here: endpoint chains accept ESTABLISHED
     * and RELATED before any policy, so (as Calico) one hit is logged per connection and rule.
     */
    private List<GenericRule> rules(List<CompiledRule> compiled, Target deny, HitPrefixes log, boolean inbound) {
        List<GenericRule> out = new ArrayList<>();
        for (int i = 0; i < compiled.size(); i++) {
            CompiledRule r = compiled.get(i);
            Verdict v = log == null ? null : HitTable.verdict(r.action());
            out.addAll(rule(r, deny, v == null ? null : nflog(inbound, log.prefix(v, i))));
        }
        return out;
    }

    private static GenericRule nflog(boolean inbound, String prefix, Match... matches) {
        return new GenericRule(List.of(matches), new Target.Nflog(NflogPrefix.group(inbound), prefix), null);
    }

    /** One compiled rule: a rule per family it can match and per port alternative, then its verdict. */
    public List<GenericRule> rule(CompiledRule r) {
        return rule(r, settings.denyTarget());
    }

    private List<GenericRule> rule(CompiledRule r, Target deny) {
        return rule(r, deny, null);
    }

    /**
     * {@code log}: an NFLOG rule without matches, logged right before the verdict. Allow and
     * Pass log once on the mark their alternatives set (a packet matching two alternatives logs
     * once); Deny logs with each alternative's matches.
     */
    private List<GenericRule> rule(CompiledRule r, Target deny, GenericRule log) {
        List<List<Match>> combos = new ArrayList<>();
        Set<IpFamily> specific = familySpecific(r) ? familiesOf(r) : null;
        if (specific == null) {
            combos.addAll(matches(r, null));
        } else {
            for (IpFamily f : IpFamily.values()) {
                if (specific.contains(f)) {
                    combos.addAll(matches(r, f));
                }
            }
        }
        List<GenericRule> out = new ArrayList<>();
        switch (r.action()) {
            case Allow, Pass -> {
                long bit = r.action() == Action.Allow ? marks.accept() : marks.pass();
                combos.forEach(m -> out.add(new GenericRule(m, new Target.SetMark(bit), null)));
                if (!combos.isEmpty()) {
                    if (log != null) {
                        out.add(new GenericRule(List.of(new Match.MarkAllSet(bit)), log.target(), null));
                    }
                    out.add(GenericRule.of(Target.RETURN, new Match.MarkAllSet(bit)));
                }
            }
            case Deny -> combos.forEach(m -> {
                if (log != null) {
                    out.add(new GenericRule(m, log.target(), null));
                }
                out.add(new GenericRule(m, deny, null));
            });
            case Log -> combos.forEach(m -> out.add(new GenericRule(m, new Target.Log("calico-packet: "), null)));
        }
        return out;
    }

    /** Whether the rule only makes sense per family: it names addresses, sets, ICMP or an IP version. */
    private static boolean familySpecific(CompiledRule r) {
        return r.ipVersion() != null || r.icmp() != null || r.notIcmp() != null || isIcmp(r.protocol())
                || hasAddresses(r.source()) || hasAddresses(r.destination());
    }

    private static boolean hasAddresses(CompiledRule.Side s) {
        return !s.nets().isEmpty() || !s.notNets().isEmpty() || !s.ipSetIds().isEmpty() || !s.notIpSetIds().isEmpty()
                || !s.namedPortIpSetIds().isEmpty() || !s.notNamedPortIpSetIds().isEmpty();
    }

    private static boolean isIcmp(String protocol) {
        return protocol != null && (protocol.equalsIgnoreCase("icmp") || protocol.equalsIgnoreCase("icmpv6"));
    }

    /** The rendered families this family-specific rule can match. */
    private Set<IpFamily> familiesOf(CompiledRule r) {
        Set<IpFamily> out = EnumSet.noneOf(IpFamily.class);
        out.addAll(families);
        if (r.ipVersion() != null) {
            out.retainAll(Set.of(r.ipVersion() == 6 ? IpFamily.V6 : IpFamily.V4));
        }
        if (r.protocol() != null && r.protocol().equalsIgnoreCase("icmp")) {
            out.remove(IpFamily.V6);
        } else if (r.protocol() != null && r.protocol().equalsIgnoreCase("icmpv6")) {
            out.remove(IpFamily.V4);
        }
        for (CompiledRule.Side s : List.of(r.source(), r.destination())) {
            if (!s.nets().isEmpty()) {
                out.removeIf(f -> s.nets().stream().noneMatch(n -> IpFamily.of(n) == f));
            }
        }
        return out;
    }

    /** The match lists of one rule in one family ({@code null}: family-neutral), one per port alternative. */
    private List<List<Match>> matches(CompiledRule r, IpFamily f) {
        List<Match> common = new ArrayList<>();
        if (f != null) {
            common.add(new Match.Family(f));
        }
        if (r.protocol() != null) {
            common.add(new Match.Protocol(r.protocol().toLowerCase(Locale.ROOT), false));
        }
        if (r.notProtocol() != null) {
            common.add(new Match.Protocol(r.notProtocol().toLowerCase(Locale.ROOT), true));
        }
        if (r.icmp() != null && r.icmp().type() != null) {
            common.add(new Match.Icmp(f, r.icmp().type(), r.icmp().code(), false));
        }
        if (r.notIcmp() != null && r.notIcmp().type() != null) {
            common.add(new Match.Icmp(f, r.notIcmp().type(), r.notIcmp().code(), true));
        }
        side(r.source(), Dir.SRC, f, common);
        side(r.destination(), Dir.DST, f, common);
        List<List<Match>> combos = new ArrayList<>();
        for (List<Match> s : alternatives(r.source(), Dir.SRC, f)) {
            for (List<Match> d : alternatives(r.destination(), Dir.DST, f)) {
                List<Match> m = new ArrayList<>(common);
                m.addAll(s);
                m.addAll(d);
                combos.add(List.copyOf(m));
            }
        }
        return combos;
    }

    /** The ANDed matches of one side: nets, negated nets, set membership, negated ports. */
    private static void side(CompiledRule.Side side, Dir dir, IpFamily f, List<Match> out) {
        List<String> nets = inFamily(side.nets(), f);
        if (!nets.isEmpty()) {
            out.add(new Match.Nets(dir, nets, false));
        }
        List<String> notNets = inFamily(side.notNets(), f);
        if (!notNets.isEmpty()) {
            out.add(new Match.Nets(dir, notNets, true));
        }
        side.ipSetIds().forEach(id -> out.add(new Match.InSet(dir, f, id, false)));
        side.notIpSetIds().forEach(id -> out.add(new Match.InSet(dir, f, id, true)));
        if (!side.notPorts().isEmpty()) {
            out.add(new Match.Ports(dir, side.notPorts(), true));
        }
        side.notNamedPortIpSetIds().forEach(id -> out.add(new Match.NamedPortSet(dir, f, id, true)));
    }

    private static List<String> inFamily(List<String> nets, IpFamily f) {
        return f == null ? nets : nets.stream().filter(n -> IpFamily.of(n) == f).toList();
    }

    /** The ORed port matches of one side; one empty alternative when the side has none. */
    private static List<List<Match>> alternatives(CompiledRule.Side side, Dir dir, IpFamily f) {
        List<List<Match>> alts = new ArrayList<>();
        if (!side.ports().isEmpty()) {
            alts.add(List.of(new Match.Ports(dir, side.ports(), false)));
        }
        side.namedPortIpSetIds().forEach(id -> alts.add(List.of(new Match.NamedPortSet(dir, f, id, false))));
        if (alts.isEmpty()) {
            alts.add(List.of());
        }
        return alts;
    }

    /**
     * {@return one rule per workload interface prefix, in the configured order}, as Calico renders
     * them: {@code rule} gets the prefix's match ({@code -i cali+} / {@code iifname "cali*"}).
     */
    private List<GenericRule> perPrefix(boolean in, java.util.function.Function<Match, GenericRule> rule) {
        return interfacePrefixes.stream().map(p -> rule.apply(new Match.Interface(in, p, true))).toList();
    }

    @SafeVarargs
    private static <T> List<T> concat(List<? extends T>... parts) {
        List<T> out = new ArrayList<>();
        for (List<? extends T> p : parts) {
            out.addAll(p);
        }
        return out;
    }
}
