package calico.felix.dataplane;

import calico.api.codec.ResourceCodec;
import calico.api.model.EntityRule;
import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Port;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Protocol;
import calico.api.model.Resource;
import calico.api.model.Rule;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CalculationGraph;
import calico.felix.calc.DataplaneUpdate;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Test wiring shared by the kernel dataplane tests: a "host" namespace with an uplink (so proxy
 * ARP answers), workload namespaces wired only as the CNI plugin does (address and default route
 * inside; the host side is the dataplane's job), a real {@link CalculationGraph} whose batches go
 * to the dataplane under test, and resource builders. Every namespace is deleted by {@link #close()}.
 */
final class KernelTestbed implements AutoCloseable {

    static final String NODE = "node1";

    private final List<NetNs> namespaces = new ArrayList<>();
    private final List<List<DataplaneUpdate>> pending = new ArrayList<>();
    private final CalculationGraph graph = CalculationGraph.create(NODE, pending::add);
    private final List<List<DataplaneUpdate>> stream = new ArrayList<>();
    private long revision;
    final NetNs host;
    KernelDataplane dataplane;

    KernelTestbed(String prefix) {
        host = ns(prefix + "h");
        host.uplink();
    }

    NetNs ns(String prefix) {
        NetNs n = NetNs.create(prefix);
        namespaces.add(n);
        return n;
    }

    /** A workload namespace wired as the CNI plugin leaves it: {@code eth0} with {@code ip/32}, default via 169.254.1.1. */
    NetNs workload(String prefix, String hostIf, String ip) {
        NetNs w = ns(prefix);
        wire(w, hostIf, ip);
        return w;
    }

    void wire(NetNs w, String hostIf, String ip) {
        host.veth(hostIf, w, "eth0");
        w.exec("ip", "addr", "add", ip + "/32", "dev", "eth0");
        w.exec("ip", "route", "add", "default", "via", "169.254.1.1", "dev", "eth0", "onlink");
    }

    /** Sends the resources through the graph and hands every flushed batch to the dataplane. */
    void put(Resource... resources) {
        graph.onUpdates(Arrays.stream(resources).map(r -> Update.of(UpdateType.NEW, r, ++revision)).toList());
        flush();
    }

    void inSync() {
        graph.onStatus(SyncerStatus.IN_SYNC);
        flush();
    }

    void flush() {
        graph.flush();
        List<List<DataplaneUpdate>> batches = new ArrayList<>(pending);
        pending.clear();
        stream.addAll(batches);
        batches.forEach(dataplane::apply);
        if (!dataplane.awaitApplied(java.time.Duration.ofSeconds(60))) {
            throw new AssertionError("the dataplane did not apply the batches within 60 s");
        }
    }

    /** {@return every batch the dataplane has been given} */
    List<List<DataplaneUpdate>> stream() {
        return List.copyOf(stream);
    }

    @Override
    public void close() {
        if (dataplane != null) {
            dataplane.close();
        }
        namespaces.forEach(NetNs::close);
    }

    // ---------------------------------------------------------------- resources

    static FelixConfiguration felixConfig(Map<String, ?> spec) {
        FelixConfigurationSpec s = ResourceCodec.get().jsonMapper().convertValue(spec, FelixConfigurationSpec.class);
        return new FelixConfiguration(ObjectMeta.named("default"), s);
    }

    static WorkloadEndpoint wep(String name, String ip, String iface, String app) {
        return new WorkloadEndpoint(ObjectMeta.namespaced("test", name).withLabels(Map.of("app", app)),
                new WorkloadEndpointSpec("k8s", null, NODE, null, name, "eth0", null, List.of(ip + "/32"), null,
                        null, null, List.of("kns.test"), iface, "ee:ee:ee:ee:ee:ee", List.of(), null));
    }

    static Tier tier(String name, Double order) {
        return new Tier(ObjectMeta.named(name), new TierSpec(order, null));
    }

    static Profile allowAllProfile(String name) {
        return new Profile(ObjectMeta.named(name),
                new ProfileSpec(List.of(Rule.allow()), List.of(Rule.allow()), Map.of()));
    }

    /** Ingress to {@code selector} allowed from {@code source} on TCP {@code port} only; the tier denies the rest. */
    static GlobalNetworkPolicy allowFromOnPort(String name, String selector, String source, int port) {
        Rule rule = Rule.allow().withProtocol(Protocol.TCP).withSource(EntityRule.empty().withSelector(source))
                .withDestination(EntityRule.empty().withPorts(List.of(Port.of(port))));
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", 1.0,
                List.of(rule), List.of(), selector, List.of(PolicyType.Ingress), null, null, null, null, null, null));
    }
}
