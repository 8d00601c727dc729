package calico.felix.calc;

import calico.api.k8s.KubernetesConverter;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Felix's calculation graph for one node: consumes the syncer's stream of every resource in the
 * cluster and emits, incrementally, what this node's dataplane must hold (see
 * {@code felix-service/design/calc-graph.md}).
 *
 * <p>Single-threaded and synchronous: call {@link #onUpdates} and {@link #onStatus} from one
 * thread. Each {@code onUpdates} batch ends with a flush, so the consumer sees one consistent
 * batch of {@link DataplaneUpdate}s per input batch.
 */
public final class CalculationGraph {

    private final Dispatcher dispatcher;
    private final PolicyResolver resolver;
    private final EventSequencer sequencer;

    private CalculationGraph(Dispatcher dispatcher, PolicyResolver resolver, EventSequencer sequencer) {
        this.dispatcher = dispatcher;
        this.resolver = resolver;
        this.sequencer = sequencer;
    }

    /**
     * Builds the graph.
     *
     * @param hostname this node's name: endpoints with {@code spec.node} equal to it are local
     * @param out      receives each flushed batch, in order
     */
    public static CalculationGraph create(String hostname, Consumer<List<DataplaneUpdate>> out) {
        return create(hostname, Map.of(), out);
    }

    /**
     * Builds the graph with the infrastructure stages reading {@code FELIX_*} settings from
     * {@code environment} (highest priority of the configuration sources).
     */
    public static CalculationGraph create(String hostname, Map<String, String> environment,
                                          Consumer<List<DataplaneUpdate>> out) {
        return create(hostname, environment, out, new KubernetesConverter());
    }

    public static CalculationGraph create(String hostname, Map<String, String> environment,
                                          Consumer<List<DataplaneUpdate>> out, KubernetesConverter converter) {
        return create(hostname, environment, out, converter, true);
    }

    /**
     * Builds the graph; {@code servicesPresented} says whether the datastore presents Kubernetes
     * Services and their EndpointSlices (the kubernetes datastore): where it does not, a rule's
     * {@code services} match matches nothing and is reported once per rule.
     */
    public static CalculationGraph create(String hostname, Map<String, String> environment,
                                          Consumer<List<DataplaneUpdate>> out, KubernetesConverter converter,
                                          boolean servicesPresented) {
        Objects.requireNonNull(hostname, "hostname");
        Objects.requireNonNull(environment, "environment");
        Objects.requireNonNull(out, "out");
        Dispatcher dispatcher = new Dispatcher();
        EventSequencer sequencer = new EventSequencer(out);

        //                 syncer Updates
        //                       |
        //                 +------------+
        //                 | Dispatcher |  (by ResourceKind)
        //                 +------------+
        //      WEP/HEP/NetworkSet/Profile |            policies, profiles, WEP/HEP, tiers
        //                       v                              |
        //          +------------------------+  local labels    v
        //          | LabelInheritanceIndex  |---------> +-----------------------+
        //          +------------------------+           | ActiveRulesCalculator |
        //                       | all labels            |  (local SelectorIndex)|
        //                       v                       +-----------------------+
        //          +------------------------+  ref/unref   |matches     |compiled rules
        //          | IpSetMemberCalculator  |<-------------+            v            |
        //          |  (global SelectorIndex)|             +----------------+         |
        //          +------------------------+             | PolicyResolver |         |
        //                       | members                 +----------------+         |
        //                       v                                 | endpoints        |
        //          +--------------------------------------------------------------+  |
        //          |                        EventSequencer                        |<-+
        //          +--------------------------------------------------------------+
        //                       ^ config/hosts/pools/routes (InfraStages via InfraListener)
        //                       v
        //              Consumer<List<DataplaneUpdate>>
        IpSetMemberCalculator ipSetMembers = new IpSetMemberCalculator(sequencer);
        // Rules' services matches: their sets' members come from EndpointSlices, not labels.
        //   ActiveRulesCalculator --ref/unref svc sets--> ServiceIpSetCalculator --members--> EventSequencer
        //   KubernetesEndpointSlice ------------------------^
        ServiceIpSetCalculator serviceSets = new ServiceIpSetCalculator(sequencer);
        PolicyResolver resolver = new PolicyResolver(hostname, sequencer);
        ActiveRulesCalculator activeRules = new ActiveRulesCalculator(hostname, converter,
                new RuleCompiler(servicesPresented), resolver, sequencer, new ActiveRulesCalculator.IpSetRefListener() {
                    @Override
                    public void ref(IpSetSpec spec) {
                        if (spec.service() != null) {
                            serviceSets.ref(spec);
                        } else {
                            ipSetMembers.ref(spec);
                        }
                    }

                    @Override
                    public void unref(String id) {
                        if (IpSetSpec.isService(id)) {
                            serviceSets.unref(id);
                        } else {
                            ipSetMembers.unref(id);
                        }
                    }
                });
        LabelInheritanceIndex labels = new LabelInheritanceIndex(hostname, ipSetMembers, activeRules);

        // Registration order matters within one update: member sources before labels (either
        // order is correct, this one avoids a remove/add of the same members), and the policy
        // and profile tracking before the resolver reads them at flush.
        ipSetMembers.registerWith(dispatcher);
        serviceSets.registerWith(dispatcher);
        labels.registerWith(dispatcher);
        activeRules.registerWith(dispatcher);
        resolver.registerWith(dispatcher);
        // Flow-log lookups (remote workloads, host endpoints, network sets by address): held
        // always, emitted while the effective config turns flow logs on.
        //   WEP/HEP/(Global)NetworkSet --> FlowLookupStage --> EventSequencer
        //   ConfigResolver ---config----^
        FlowLookupStage lookups = new FlowLookupStage(hostname, sequencer);
        lookups.registerWith(dispatcher);
        // Config, host metadata, IP pools and routes: independent stages feeding the sequencer.
        InfraStages.registerAll(dispatcher, hostname, environment, u -> {
            if (u instanceof DataplaneUpdate.ConfigUpdate c) {
                lookups.onConfig(c);
            }
            sequencer.onInfraUpdate(u);
        });
        dispatcher.registerStatus(sequencer::onStatus);
        return new CalculationGraph(dispatcher, resolver, sequencer);
    }

    /** The sink for the infrastructure stages (config, hosts, pools, routes). */
    public InfraListener infraListener() {
        return sequencer;
    }

    /** The dispatcher, for infrastructure stages to register with. */
    public Dispatcher dispatcher() {
        return dispatcher;
    }

    /** Applies one syncer batch and flushes. */
    public void onUpdates(List<Update> updates) {
        dispatcher.onUpdates(updates);
        flush();
    }

    public void onStatus(SyncerStatus status) {
        dispatcher.onStatus(status);
        flush();
    }

    /** Emits whatever is pending (endpoints are resolved here, in one pass per batch). */
    public void flush() {
        resolver.flush();
        sequencer.flush();
    }
}
