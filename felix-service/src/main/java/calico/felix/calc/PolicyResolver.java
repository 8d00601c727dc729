package calico.felix.calc;

import calico.api.model.Action;
import calico.api.model.HostEndpoint;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.net.Cidr;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns (policy, local endpoint) matches into each local endpoint's ordered tier lists, one per
 * direction, and emits the endpoint when anything that shapes it changed.
 *
 * <p>Order, as Calico: tiers by order then name, policies by order then name, a missing order
 * sorting last. A tier appears for a direction when a policy of it that applies to that direction
 * selects the endpoint. A tier that does not exist fails closed: it is listed with no policies
 * and default Deny. Work is batched: changes mark endpoints dirty and {@link #flush} emits them.
 * A missing tier or profile is warned about once, and only if it is still missing when the
 * datastore is in sync: a snapshot delivers its kinds in any order, so a policy may come before
 * its tier without anything being wrong.
 */
final class PolicyResolver implements ActiveRulesCalculator.PolicyMatchListener {

    private static final Logger LOG = LoggerFactory.getLogger(PolicyResolver.class);

    interface EndpointListener {
        void onEndpointUpdate(DataplaneUpdate update);

        void onEndpointRemove(ResourceKey key);
    }

    private static final Comparator<Double> ORDER = Comparator.nullsLast(Comparator.naturalOrder());

    private final String hostname;
    private final EndpointListener listener;
    private final Map<String, TierSpec> tiers = new HashMap<>();
    private final Map<PolicyId, PolicyView> views = new HashMap<>();
    private final Set<String> profiles = new HashSet<>();
    /** Local endpoints as last seen. */
    private final Map<ResourceKey, Object> endpoints = new HashMap<>();
    private final Map<ResourceKey, Set<PolicyId>> policiesByEndpoint = new HashMap<>();
    private final Map<PolicyId, Set<ResourceKey>> endpointsByPolicy = new HashMap<>();
    private final Set<ResourceKey> dirty = new LinkedHashSet<>();
    /** What was last emitted per endpoint: a recomputation that changes nothing is not sent. */
    private final Map<ResourceKey, DataplaneUpdate> emitted = new HashMap<>();
    /** A tier or profile that something names. */
    private record Referent(boolean tier, String name) {
    }

    /** Missing tiers and profiles already logged, so a missing referent is logged once. */
    private final Set<Referent> loggedMissing = new HashSet<>();
    /** Missing referents seen before in-sync, with their warning. */
    private final Map<Referent, String> missingBeforeSync = new LinkedHashMap<>();
    private boolean inSync;

    PolicyResolver(String hostname, EndpointListener listener) {
        this.hostname = hostname;
        this.listener = listener;
    }

    void registerWith(Dispatcher d) {
        d.register(ResourceKind.TIER, this::onTier);
        d.register(ResourceKind.PROFILE, this::onProfile);
        d.register(ResourceKind.WORKLOAD_ENDPOINT, this::onEndpoint);
        d.register(ResourceKind.HOST_ENDPOINT, this::onEndpoint);
        d.registerStatus(this::onStatus);
    }

    /** At in-sync, warns about the referents still missing after the whole snapshot. */
    private void onStatus(SyncerStatus status) {
        inSync = status == SyncerStatus.IN_SYNC;
        if (inSync) {
            missingBeforeSync.forEach((what, warning) -> {
                boolean still = what.tier() ? !tiers.containsKey(what.name()) : !profiles.contains(what.name());
                if (still && loggedMissing.add(what)) {
                    LOG.warn(warning);
                }
            });
            missingBeforeSync.clear();
        }
    }

    /** Warns once that {@code what} is missing; before in-sync, only notes it for {@link #onStatus}. */
    private void missing(Referent what, String warning) {
        if (!inSync) {
            missingBeforeSync.putIfAbsent(what, warning);
        } else if (loggedMissing.add(what)) {
            LOG.warn(warning);
        }
    }

    @Override
    public void onPolicyUpdated(PolicyView view) {
        PolicyView old = views.put(view.id(), view);
        if (old != null && (!Objects.equals(old.order(), view.order()) || old.ingress() != view.ingress()
                || old.egress() != view.egress() || !old.hostKind().equals(view.hostKind()))) {
            dirty.addAll(endpointsByPolicy.getOrDefault(view.id(), Set.of()));
        }
    }

    @Override
    public void onPolicyRemoved(PolicyId id) {
        views.remove(id);
    }

    @Override
    public void onPolicyMatchStarted(PolicyId id, ResourceKey ep) {
        policiesByEndpoint.computeIfAbsent(ep, x -> new HashSet<>()).add(id);
        endpointsByPolicy.computeIfAbsent(id, x -> new HashSet<>()).add(ep);
        dirty.add(ep);
    }

    @Override
    public void onPolicyMatchStopped(PolicyId id, ResourceKey ep) {
        remove(policiesByEndpoint, ep, id);
        remove(endpointsByPolicy, id, ep);
        dirty.add(ep);
    }

    private static <A, B> void remove(Map<A, Set<B>> m, A a, B b) {
        Set<B> s = m.get(a);
        if (s != null && s.remove(b) && s.isEmpty()) {
            m.remove(a);
        }
    }

    private void onTier(Update u) {
        String name = u.key().name();
        TierSpec now = u.value() == null ? null : spec((Tier) u.value());
        TierSpec old = u.value() == null ? tiers.remove(name) : tiers.put(name, now);
        if (Objects.equals(old, now)) {
            return;
        }
        loggedMissing.remove(new Referent(true, name));
        endpointsByPolicy.forEach((id, eps) -> {
            if (id.tier().equals(name)) {
                dirty.addAll(eps);
            }
        });
    }

    private static TierSpec spec(Tier t) {
        return t.spec() == null ? new TierSpec(null, null) : t.spec();
    }

    private void onProfile(Update u) {
        String name = u.key().name();
        boolean changed = u.value() == null ? profiles.remove(name) : profiles.add(name);
        if (changed) {
            loggedMissing.remove(new Referent(false, name));
            endpoints.forEach((key, ep) -> {
                if (profilesOf(ep).contains(name)) {
                    dirty.add(key);
                }
            });
        }
    }

    private void onEndpoint(Update u) {
        Object now = null;
        if (u.value() instanceof WorkloadEndpoint w && w.spec() != null && hostname.equals(w.spec().node())) {
            now = w;
        } else if (u.value() instanceof HostEndpoint h && h.spec() != null && hostname.equals(h.spec().node())) {
            now = h;
        }
        Object old = now == null ? endpoints.remove(u.key()) : endpoints.put(u.key(), now);
        if (!Objects.equals(old, now)) {
            dirty.add(u.key());
        }
    }

    private static List<String> profilesOf(Object ep) {
        if (ep instanceof WorkloadEndpoint w) {
            return w.spec().profiles();
        }
        return ((HostEndpoint) ep).spec().profiles();
    }

    /** Emits every endpoint whose shape changed since the last flush. */
    void flush() {
        for (ResourceKey key : dirty) {
            Object ep = endpoints.get(key);
            if (ep == null) {
                if (emitted.remove(key) != null) {
                    listener.onEndpointRemove(key);
                }
            } else {
                DataplaneUpdate u = resolve(key, ep);
                if (!u.equals(emitted.put(key, u))) {
                    listener.onEndpointUpdate(u);
                }
            }
        }
        dirty.clear();
    }

    private DataplaneUpdate resolve(ResourceKey key, Object ep) {
        Set<PolicyId> matched = policiesByEndpoint.getOrDefault(key, Set.of());
        boolean host = ep instanceof HostEndpoint;
        // Host endpoints split their policies by kind, as Calico's event sequencer does: the normal
        // lists hold neither untracked nor pre-DNAT ones; the forward lists the normal applyOnForward ones.
        java.util.function.Predicate<PolicyView> normal = v -> !host || v.hostKind().normal();
        List<TierPolicies> in = tierList(matched, true, normal);
        List<TierPolicies> out = tierList(matched, false, normal);
        List<String> profileIds = new ArrayList<>();
        for (String p : profilesOf(ep)) {
            if (profiles.contains(p)) {
                if (!profileIds.contains(p)) {
                    profileIds.add(p);
                }
            } else {
                missing(new Referent(false, p), key + " names missing profile " + p + ": it contributes nothing (fail closed)");
            }
        }
        List<String> v4 = new ArrayList<>();
        List<String> v6 = new ArrayList<>();
        if (ep instanceof WorkloadEndpoint w) {
            split(w.spec().ipNetworks(), v4, v6);
            return new DataplaneUpdate.WorkloadEndpointUpdate(key.namespace() + "/" + key.name(),
                    w.spec().interfaceName(), w.spec().mac(), v4, v6, profileIds, in, out,
                    new DataplaneUpdate.EndpointIdentity(w.metadata().labels(), w.metadata().generateName()),
                    floatingIps(w), w.spec().allowSpoofedSourcePrefixes(), workloadKey(key.namespace(), w));
        }
        HostEndpoint h = (HostEndpoint) ep;
        split(h.spec().expectedIPs(), v4, v6);
        java.util.function.Predicate<PolicyView> forward = v -> v.hostKind().normal() && v.hostKind().applyOnForward();
        return new DataplaneUpdate.HostEndpointUpdate(key.name(), h.spec().interfaceName(), v4, v6, profileIds, in,
                out, tierList(matched, true, v -> v.hostKind().doNotTrack()),
                tierList(matched, false, v -> v.hostKind().doNotTrack()),
                tierList(matched, true, v -> v.hostKind().preDnat() && !v.hostKind().doNotTrack()),
                tierList(matched, true, forward), tierList(matched, false, forward));
    }

    /** Calico's key of a workload endpoint: the pod for Kubernetes, else the workload, under its namespace. */
    private static DataplaneUpdate.WorkloadKey workloadKey(String namespace, WorkloadEndpoint w) {
        String workload = "k8s".equals(w.spec().orchestrator()) ? w.spec().pod() : w.spec().workload();
        return new DataplaneUpdate.WorkloadKey(w.spec().orchestrator(), namespace + "/" + (workload == null ? ""
                : workload), w.spec().endpoint());
    }

    /** The workload's {@code ipNATs} (validated by the datastore: addresses, the internal one the workload's own). */
    private static List<DataplaneUpdate.FloatingIp> floatingIps(WorkloadEndpoint w) {
        return w.spec().ipNATs().stream()
                .filter(n -> n.internalIP() != null && n.externalIP() != null)
                .map(n -> new DataplaneUpdate.FloatingIp(n.internalIP(), n.externalIP())).toList();
    }

    private static void split(List<String> nets, List<String> v4, List<String> v6) {
        for (String n : nets) {
            Cidr.tryParseCidrOrIp(n).ifPresent(c -> (c.version() == 4 ? v4 : v6).add(c.network().toString()));
        }
    }

    private List<TierPolicies> tierList(Set<PolicyId> matched, boolean ingress,
                                        java.util.function.Predicate<PolicyView> kind) {
        Map<String, List<PolicyView>> byTier = new TreeMap<>();
        for (PolicyId id : matched) {
            PolicyView v = views.get(id);
            if (v != null && (ingress ? v.ingress() : v.egress()) && kind.test(v)) {
                byTier.computeIfAbsent(id.tier(), x -> new ArrayList<>()).add(v);
            }
        }
        List<String> tierNames = new ArrayList<>(byTier.keySet());
        tierNames.sort(tierOrder(tiers));
        List<TierPolicies> out = new ArrayList<>(tierNames.size());
        for (String t : tierNames) {
            TierSpec spec = tiers.get(t);
            if (spec == null) {
                missing(new Referent(true, t), "policies in missing tier " + t + " select a local endpoint: the tier denies (fail closed)");
                out.add(new TierPolicies(t, Action.Deny, List.of(), true));
                continue;
            }
            List<PolicyView> ps = byTier.get(t);
            ps.sort(policyOrder());
            out.add(new TierPolicies(t, spec.defaultAction() == Action.Pass ? Action.Pass : Action.Deny,
                    ps.stream().map(PolicyView::id).toList(), false));
        }
        return out;
    }

    /** Policies by order (missing last), then {@code <namespace>/<name>}, then kind. */
    static Comparator<PolicyView> policyOrder() {
        return Comparator.comparing(PolicyView::order, ORDER)
                .thenComparing(v -> v.id().sortName())
                .thenComparing(v -> v.id().kind());
    }

    /** Tiers by order (missing, or tier missing, last), then name. */
    static Comparator<String> tierOrder(Map<String, TierSpec> tiers) {
        return Comparator.<String, Double>comparing(t -> tiers.containsKey(t) ? tiers.get(t).order() : null, ORDER)
                .thenComparing(Comparator.naturalOrder());
    }
}
