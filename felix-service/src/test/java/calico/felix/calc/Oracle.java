package calico.felix.calc;

import calico.api.k8s.KubernetesConverter;
import calico.api.model.Action;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.HostEndpoint;
import calico.api.model.NetworkSet;
import calico.api.model.Profile;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.Tier;
import calico.api.model.WorkloadEndpoint;
import calico.api.net.Cidr;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The brute-force model: recomputes the whole dataplane state from the current resources, with
 * no incremental index. Shares only the pure per-policy pieces (PolicyView, RuleCompiler) with
 * the graph; matching, inheritance, activeness, ordering and membership are recomputed here.
 */
final class Oracle {

    private Oracle() {
    }

    static DataplaneState.Snapshot compute(String me, Map<ResourceKey, Resource> world) {
        KubernetesConverter conv = new KubernetesConverter();
        RuleCompiler compiler = new RuleCompiler(true);
        Map<String, Profile> profiles = new HashMap<>();
        Map<String, Tier> tiers = new HashMap<>();
        Map<ResourceKey, Map<String, String>> labels = new HashMap<>();
        List<PolicyView> views = new ArrayList<>();
        List<StagedDelete> deletes = new ArrayList<>();
        for (Resource r : world.values()) {
            if (r instanceof Profile p) {
                profiles.put(p.metadata().name(), p);
            } else if (r instanceof Tier t) {
                tiers.put(t.metadata().name(), t);
            } else if (r instanceof calico.api.model.GlobalNetworkPolicy || r instanceof calico.api.model.NetworkPolicy
                    || r instanceof calico.api.model.StagedGlobalNetworkPolicy
                    || r instanceof calico.api.model.StagedNetworkPolicy
                    || r instanceof calico.api.model.StagedKubernetesNetworkPolicy) {
                StagedDelete d = StagedDelete.of(r);
                if (d != null) {
                    deletes.add(d);
                    continue;
                }
                try {
                    views.add(PolicyView.of(r, conv));
                } catch (RuntimeException e) {
                    // unparseable: ignored, as the graph does
                }
            }
        }
        Map<PolicyId, PolicyId> deleteTargets = new HashMap<>();
        for (StagedDelete d : deletes) { // in its target's place, or nowhere
            views.stream().filter(v -> v.id().equals(d.target())).findFirst().ifPresent(t -> {
                views.add(d.view(t));
                deleteTargets.put(d.staged(), d.target());
            });
        }
        for (Resource r : world.values()) {
            Map<String, String> own = new HashMap<>(r.metadata().labels());
            List<String> parents = List.of();
            if (r instanceof WorkloadEndpoint w) {
                own.put("projectcalico.org/namespace", w.metadata().namespace());
                own.put("projectcalico.org/orchestrator", w.spec().orchestrator());
                parents = w.spec().profiles();
            } else if (r instanceof HostEndpoint h) {
                parents = h.spec().profiles();
            } else if (r instanceof NetworkSet n) {
                own.put("projectcalico.org/namespace", n.metadata().namespace());
                parents = List.of("kns." + n.metadata().namespace());
            } else if (!(r instanceof GlobalNetworkSet)) {
                continue;
            }
            Map<String, String> eff = new HashMap<>();
            for (String p : parents) {
                if (profiles.containsKey(p)) {
                    eff.putAll(profiles.get(p).spec().labelsToApply());
                }
            }
            eff.putAll(own);
            labels.put(r.key(), eff);
        }
        List<Resource> local = world.values().stream().filter(r ->
                (r instanceof WorkloadEndpoint w && me.equals(w.spec().node()))
                        || (r instanceof HostEndpoint h && me.equals(h.spec().node()))).toList();

        Map<PolicyId, CompiledPolicy> policies = new HashMap<>();
        Map<String, CompiledPolicy> activeProfiles = new HashMap<>();
        Map<String, IpSetSpec> specs = new HashMap<>();
        Map<String, DataplaneUpdate.WorkloadEndpointUpdate> weps = new HashMap<>();
        Map<String, DataplaneUpdate.HostEndpointUpdate> heps = new HashMap<>();
        for (Resource ep : local) {
            List<PolicyView> matched = views.stream().filter(v -> v.selector().matches(labels.get(ep.key()))).toList();
            for (PolicyView v : matched) {
                if (deleteTargets.containsKey(v.id())) {
                    policies.put(v.id(), CompiledPolicy.stagedDelete(deleteTargets.get(v.id())));
                    continue;
                }
                RuleCompiler.Result res = compiler.compile(v.ingressRules(), v.egressRules(), v.namespace(),
                        v.id().staged(), "");
                policies.put(v.id(), res.policy());
                specs.putAll(res.ipSets());
            }
            List<String> profileNames = ep instanceof WorkloadEndpoint w ? w.spec().profiles()
                    : ((HostEndpoint) ep).spec().profiles();
            List<String> present = new ArrayList<>();
            for (String p : profileNames) {
                if (profiles.containsKey(p) && !present.contains(p)) {
                    present.add(p);
                    Profile prof = profiles.get(p);
                    RuleCompiler.Result res = compiler.compile(prof.spec().ingress(), prof.spec().egress(), null,
                            false, "");
                    activeProfiles.put(p, res.policy());
                    specs.putAll(res.ipSets());
                }
            }
            List<TierPolicies> in = tiers(matched, tiers, true);
            List<TierPolicies> out = tiers(matched, tiers, false);
            List<String> nets = ep instanceof WorkloadEndpoint w ? w.spec().ipNetworks()
                    : ((HostEndpoint) ep).spec().expectedIPs();
            List<String> v4 = new ArrayList<>();
            List<String> v6 = new ArrayList<>();
            for (String n : nets) {
                Cidr c = Cidr.parseCidrOrIp(n).network();
                (c.version() == 4 ? v4 : v6).add(c.toString());
            }
            if (ep instanceof WorkloadEndpoint w) {
                String id = w.metadata().namespace() + "/" + w.metadata().name();
                weps.put(id, new DataplaneUpdate.WorkloadEndpointUpdate(id, w.spec().interfaceName(), w.spec().mac(),
                        v4, v6, present, in, out,
                        new DataplaneUpdate.EndpointIdentity(w.metadata().labels(), w.metadata().generateName()),
                        List.of(), w.spec().allowSpoofedSourcePrefixes(), new DataplaneUpdate.WorkloadKey(
                                w.spec().orchestrator(), w.metadata().namespace() + "/" + java.util.Objects.toString("k8s".equals(
                                w.spec().orchestrator()) ? w.spec().pod() : w.spec().workload(), ""),
                                w.spec().endpoint())));
            } else {
                HostEndpoint h = (HostEndpoint) ep;
                heps.put(h.metadata().name(), new DataplaneUpdate.HostEndpointUpdate(h.metadata().name(),
                        h.spec().interfaceName(), v4, v6, present, in, out));
            }
        }
        Map<String, Set<IpSetMember>> sets = new java.util.TreeMap<>();
        for (IpSetSpec s : specs.values()) {
            Set<IpSetMember> members = new HashSet<>();
            if (s.service() != null) {
                sets.put(s.id(), serviceMembers(s, world.values()));
                continue;
            }
            for (Resource r : world.values()) {
                Map<String, String> l = labels.get(r.key());
                if (l != null && s.selector().matches(l)) {
                    members.addAll(members(s, r));
                }
            }
            sets.put(s.id(), Set.copyOf(members));
        }
        return new DataplaneState.Snapshot(sets, Map.copyOf(policies), Map.copyOf(activeProfiles), Map.copyOf(weps),
                Map.copyOf(heps));
    }

    /** A service set from scratch: every slice of the service, every address (× every numbered port). */
    private static Set<IpSetMember> serviceMembers(IpSetSpec s, java.util.Collection<Resource> world) {
        Set<IpSetMember> out = new HashSet<>();
        for (Resource r : world) {
            if (r instanceof calico.api.model.KubernetesEndpointSlice es
                    && s.service().equals(es.metadata().namespace() + "/" + es.spec().serviceName())) {
                for (var e : es.spec().endpoints()) {
                    for (String a : e.addresses()) {
                        Cidr c = Cidr.parseCidrOrIp(a).network();
                        if (s.type() == IpSetType.NET) {
                            out.add(IpSetMember.net(c));
                        } else {
                            es.spec().ports().stream().filter(p -> p.port() != null).forEach(p -> out.add(
                                    new IpSetMember(c, p.protocol().toLowerCase(java.util.Locale.ROOT), p.port())));
                        }
                    }
                }
            }
        }
        return Set.copyOf(out);
    }

    private static List<IpSetMember> members(IpSetSpec s, Resource r) {
        List<String> nets;
        List<String[]> ports = new ArrayList<>();
        if (r instanceof WorkloadEndpoint w) {
            nets = w.spec().ipNetworks();
            w.spec().ports().forEach(p -> ports.add(new String[] {p.name(),
                    p.protocol() == null ? "tcp" : p.protocol().toString().toLowerCase(), String.valueOf(p.port())}));
        } else if (r instanceof HostEndpoint h) {
            nets = h.spec().expectedIPs();
        } else if (r instanceof NetworkSet n) {
            nets = n.spec().nets();
        } else {
            nets = ((GlobalNetworkSet) r).spec().nets();
        }
        List<IpSetMember> out = new ArrayList<>();
        for (String n : nets) {
            Cidr c = Cidr.parseCidrOrIp(n).network();
            if (s.type() == IpSetType.NET) {
                out.add(IpSetMember.net(c));
            } else {
                for (String[] p : ports) {
                    if (p[0].equals(s.portName()) && p[1].equals(s.protocol()) && c.isSingleAddress()) {
                        out.add(new IpSetMember(c, p[1], Integer.parseInt(p[2])));
                    }
                }
            }
        }
        return out;
    }

    private static List<TierPolicies> tiers(List<PolicyView> matched, Map<String, Tier> tiers, boolean ingress) {
        Map<String, List<PolicyView>> byTier = new LinkedHashMap<>();
        for (PolicyView v : matched) {
            if (ingress ? v.ingress() : v.egress()) {
                byTier.computeIfAbsent(v.id().tier(), x -> new ArrayList<>()).add(v);
            }
        }
        Comparator<Double> nullsLast = Comparator.nullsLast(Comparator.naturalOrder());
        List<String> names = new ArrayList<>(byTier.keySet());
        names.sort(Comparator.comparing((String t) -> tiers.containsKey(t) ? tiers.get(t).spec().order() : null,
                nullsLast).thenComparing(t -> t));
        List<TierPolicies> out = new ArrayList<>();
        for (String t : names) {
            if (!tiers.containsKey(t)) {
                out.add(new TierPolicies(t, Action.Deny, List.of(), true));
                continue;
            }
            List<PolicyView> ps = new ArrayList<>(byTier.get(t));
            ps.sort(Comparator.comparing(PolicyView::order, nullsLast).thenComparing(v -> v.id().sortName())
                    .thenComparing(v -> v.id().kind()));
            Action def = tiers.get(t).spec().defaultAction() == Action.Pass ? Action.Pass : Action.Deny;
            out.add(new TierPolicies(t, def, ps.stream().map(PolicyView::id).toList(), false));
        }
        return out;
    }
}
