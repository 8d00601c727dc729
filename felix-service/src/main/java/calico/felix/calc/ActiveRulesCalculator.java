package calico.felix.calc;

import calico.api.k8s.KubernetesConverter;
import calico.api.model.HostEndpoint;
import calico.api.model.Profile;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.syncer.Update;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which policies and profiles are active (touch a local endpoint), compiles them, and
 * keeps the IP sets their rules use referenced.
 *
 * <p>A policy is active while its selector matches at least one local endpoint; a profile while
 * it exists and a local endpoint names it. Matches are reported to the policy resolver, which
 * orders them per endpoint.
 */
final class ActiveRulesCalculator implements LabelInheritanceIndex.LabelListener {

    private static final Logger LOG = LoggerFactory.getLogger(ActiveRulesCalculator.class);

    /** Policy metadata and (policy, local endpoint) matches, for the resolver. */
    interface PolicyMatchListener {
        void onPolicyUpdated(PolicyView view);

        void onPolicyRemoved(PolicyId id);

        void onPolicyMatchStarted(PolicyId id, ResourceKey endpoint);

        void onPolicyMatchStopped(PolicyId id, ResourceKey endpoint);
    }

    /** Compiled active policies and profiles, for the sequencer. */
    interface RuleListener {
        void onPolicyActive(PolicyId id, CompiledPolicy policy);

        void onPolicyInactive(PolicyId id);

        void onProfileActive(String name, CompiledPolicy profile);

        void onProfileInactive(String name);
    }

    /** IP set references, for the member calculator. */
    interface IpSetRefListener {
        void ref(IpSetSpec spec);

        void unref(String id);
    }

    private final String hostname;
    private final KubernetesConverter converter;
    private final RuleCompiler compiler;
    private final PolicyMatchListener matchListener;
    private final RuleListener ruleListener;
    private final IpSetRefListener ipSets;
    /** Policy selector → local endpoints it selects: what makes a policy active. */
    private final SelectorIndex<PolicyId, ResourceKey> localIndex;
    /** Policy resource key → its current view (the ID moves if the tier changes). */
    private final Map<ResourceKey, PolicyView> policies = new HashMap<>();
    private final Map<PolicyId, PolicyView> views = new HashMap<>();
    /** Staged policies with {@code stagedAction: Delete}, by resource key: they take their target's view. */
    private final Map<ResourceKey, StagedDelete> stagedDeletes = new HashMap<>();
    /** Compiled form of each active policy / profile, to diff and to release IP sets. */
    private final Map<PolicyId, RuleCompiler.Result> activePolicies = new HashMap<>();
    private final Map<String, RuleCompiler.Result> activeProfiles = new HashMap<>();
    private final Map<String, Profile> profiles = new HashMap<>();
    /** Local endpoint → profiles it names; profile → how many local endpoints name it. */
    private final Map<ResourceKey, List<String>> localEndpointProfiles = new HashMap<>();
    private final Map<String, Integer> profileUsers = new HashMap<>();
    /** Policies already logged as unparseable, to log once per change. */
    private final Set<ResourceKey> loggedBad = new HashSet<>();

    ActiveRulesCalculator(String hostname, KubernetesConverter converter, RuleCompiler compiler, PolicyMatchListener matchListener,
                          RuleListener ruleListener, IpSetRefListener ipSets) {
        this.hostname = hostname;
        this.converter = converter;
        this.compiler = compiler;
        this.matchListener = matchListener;
        this.ruleListener = ruleListener;
        this.ipSets = ipSets;
        this.localIndex = new SelectorIndex<>(new SelectorIndex.MatchListener<>() {
            @Override
            public void onMatchStarted(PolicyId id, ResourceKey ep) {
                matchListener.onPolicyMatchStarted(id, ep);
                if (localIndex.matching(id).size() == 1) {
                    activatePolicy(id);
                }
            }

            @Override
            public void onMatchStopped(PolicyId id, ResourceKey ep) {
                matchListener.onPolicyMatchStopped(id, ep);
                if (localIndex.matching(id).isEmpty()) {
                    deactivatePolicy(id);
                }
            }
        });
    }

    void registerWith(Dispatcher d) {
        for (ResourceKind k : List.of(ResourceKind.GLOBAL_NETWORK_POLICY, ResourceKind.NETWORK_POLICY,
                ResourceKind.STAGED_GLOBAL_NETWORK_POLICY, ResourceKind.STAGED_NETWORK_POLICY,
                ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY)) {
            d.register(k, this::onPolicy);
        }
        d.register(ResourceKind.PROFILE, this::onProfile);
        d.register(ResourceKind.WORKLOAD_ENDPOINT, this::onEndpoint);
        d.register(ResourceKind.HOST_ENDPOINT, this::onEndpoint);
    }

    /** Labels of local endpoints only. */
    @Override
    public void onLabels(ResourceKey endpoint, Map<String, String> labels) {
        localIndex.updateLabels(endpoint, labels);
    }

    private void onPolicy(Update u) {
        PolicyView now = null;
        StagedDelete delete = u.value() == null ? null : StagedDelete.of(u.value());
        if (delete != null) {
            stagedDeletes.put(u.key(), delete);
            PolicyView target = views.get(delete.target());
            now = target == null ? null : delete.view(target);
        } else {
            stagedDeletes.remove(u.key());
            if (u.value() != null) {
                try {
                    now = PolicyView.of(u.value(), converter);
                    loggedBad.remove(u.key());
                } catch (RuntimeException e) {
                    if (loggedBad.add(u.key())) {
                        LOG.warn("{} ignored (fail closed): {}", u.key(), e.getMessage());
                    }
                }
            }
        }
        PolicyView old = policies.get(u.key());
        applyView(u.key(), old, now);
        // Staged deletes stand in the place of their target: they follow it.
        if (old != null && !old.id().staged()) {
            followTarget(old.id());
        }
        if (now != null && !now.id().staged() && (old == null || !old.id().equals(now.id()))) {
            followTarget(now.id());
        }
    }

    private void followTarget(PolicyId target) {
        PolicyView t = views.get(target);
        stagedDeletes.forEach((key, d) -> {
            if (d.target().equals(target)) {
                applyView(key, policies.get(key), t == null ? null : d.view(t));
            }
        });
    }

    private void applyView(ResourceKey key, PolicyView old, PolicyView now) {
        if (Objects.equals(old, now)) {
            return;
        }
        if (old != null && (now == null || !old.id().equals(now.id()))) {
            policies.remove(key);
            views.remove(old.id());
            localIndex.deleteSelector(old.id());
            matchListener.onPolicyRemoved(old.id());
        }
        if (now == null) {
            return;
        }
        policies.put(key, now);
        views.put(now.id(), now);
        matchListener.onPolicyUpdated(now);
        localIndex.updateSelector(now.id(), now.selector());
        if (activePolicies.containsKey(now.id())) {
            // Already active before this update: recompile in case the rules changed.
            activatePolicy(now.id());
        }
    }

    private void activatePolicy(PolicyId id) {
        PolicyView v = views.get(id);
        PolicyId target = deleteTarget(id);
        RuleCompiler.Result r = target != null ? new RuleCompiler.Result(CompiledPolicy.stagedDelete(target), Map.of())
                : compiler.compile(v.ingressRules(), v.egressRules(), v.namespace(), id.staged(), id.toString());
        RuleCompiler.Result old = activePolicies.put(id, r);
        if (r.equals(old)) {
            return;
        }
        r.ipSets().values().forEach(ipSets::ref);
        ruleListener.onPolicyActive(id, r.policy());
        if (old != null) {
            old.ipSets().keySet().forEach(ipSets::unref);
        }
    }

    private PolicyId deleteTarget(PolicyId id) {
        if (!id.staged()) {
            return null;
        }
        return stagedDeletes.values().stream().filter(d -> d.staged().equals(id)).map(StagedDelete::target)
                .findFirst().orElse(null);
    }

    private void deactivatePolicy(PolicyId id) {
        RuleCompiler.Result old = activePolicies.remove(id);
        if (old != null) {
            ruleListener.onPolicyInactive(id);
            old.ipSets().keySet().forEach(ipSets::unref);
        }
    }

    private void onProfile(Update u) {
        String name = u.key().name();
        Profile now = (Profile) u.value();
        if (Objects.equals(profiles.get(name), now)) {
            return;
        }
        if (now == null) {
            profiles.remove(name);
        } else {
            profiles.put(name, now);
        }
        updateProfile(name);
    }

    private void onEndpoint(Update u) {
        ResourceKey key = u.key();
        List<String> now = null;
        if (u.value() instanceof WorkloadEndpoint w && w.spec() != null && isLocal(w.spec().node())) {
            now = w.spec().profiles();
        } else if (u.value() instanceof HostEndpoint h && h.spec() != null && isLocal(h.spec().node())) {
            now = h.spec().profiles();
        }
        List<String> old = now == null ? localEndpointProfiles.remove(key) : localEndpointProfiles.put(key, now);
        if (Objects.equals(old, now)) {
            return;
        }
        Set<String> touched = new HashSet<>();
        if (now != null) {
            for (String p : new HashSet<>(now)) {
                profileUsers.merge(p, 1, Integer::sum);
                touched.add(p);
            }
        }
        if (old != null) {
            for (String p : new HashSet<>(old)) {
                if (profileUsers.merge(p, -1, Integer::sum) == 0) {
                    profileUsers.remove(p);
                }
                touched.add(p);
            }
        }
        touched.forEach(this::updateProfile);
    }

    private boolean isLocal(String node) {
        return hostname.equals(node);
    }

    private void updateProfile(String name) {
        Profile p = profiles.get(name);
        boolean active = p != null && profileUsers.containsKey(name);
        RuleCompiler.Result old = activeProfiles.get(name);
        if (!active) {
            if (old != null) {
                activeProfiles.remove(name);
                ruleListener.onProfileInactive(name);
                old.ipSets().keySet().forEach(ipSets::unref);
            }
            return;
        }
        RuleCompiler.Result r = p.spec() == null
                ? compiler.compile(List.of(), List.of(), null, false, "Profile " + name)
                : compiler.compile(p.spec().ingress(), p.spec().egress(), null, false, "Profile " + name);
        if (r.equals(old)) {
            return;
        }
        activeProfiles.put(name, r);
        r.ipSets().values().forEach(ipSets::ref);
        ruleListener.onProfileActive(name, r.policy());
        if (old != null) {
            old.ipSets().keySet().forEach(ipSets::unref);
        }
    }
}
