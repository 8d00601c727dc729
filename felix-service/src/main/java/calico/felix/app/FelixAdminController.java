package calico.felix.app;

import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.DataplaneUpdate.HostEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.RouteUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Read-only JSON view of what felix has programmed, under {@code /felix/v1}. Everything comes
 * from the dataplane's one model ({@link DataplaneModel}, the same the drivers render), read
 * between two batches, so it shows what the dataplane was told, in the graph's vocabulary. Served
 * by {@link FelixAdminApi}, which maps each path to one method here.
 */
public class FelixAdminController {

    /** A local endpoint with its policy lists; {@code kind} is {@code workload} or {@code host}. */
    public record EndpointView(String kind, String id, String interfaceName, List<String> ipv4Nets,
                               List<String> ipv6Nets, List<String> profileIds, List<TierView> ingress,
                               List<TierView> egress) {
    }

    public record TierView(String tier, String defaultAction, boolean missing, List<String> policies) {
        static TierView of(TierPolicies t) {
            return new TierView(t.tier(), String.valueOf(t.defaultAction()), t.missing(),
                    t.policies().stream().map(PolicyId::toString).toList());
        }
    }

    public record PolicyView(String id, String tier, String namespace, String name, String kind,
                             CompiledPolicy compiled) {
    }

    public record IpSetSummary(String id, String type, int memberCount) {
    }

    public record IpSetView(String id, String type, List<String> members) {
    }

    public record ErrorView(int status, String error) {
    }

    /** Thrown for an unknown id; answered 404 with the message ({@link ErrorView}). */
    static final class NotFound extends RuntimeException {
        NotFound(String message) {
            super(message);
        }
    }

    private final ProgrammedState state;
    private final FelixDaemon daemon;

    public FelixAdminController(ProgrammedState state, FelixDaemon daemon) {
        this.state = state;
        this.daemon = daemon;
    }

    /** {@return what {@code reader} makes of the dataplane's model}, read between two batches (copy what you keep) */
    private <T> T read(java.util.function.Function<DataplaneModel, T> reader) {
        return state.model().read(reader);
    }

    public List<EndpointView> endpoints() {
        List<EndpointView> out = new java.util.ArrayList<>();
        read(m -> List.copyOf(m.workloads().values())).stream()
                .sorted(Comparator.comparing(WorkloadEndpointUpdate::id))
                .map(FelixAdminController::view).forEach(out::add);
        read(m -> List.copyOf(m.hostEndpoints().values())).stream()
                .sorted(Comparator.comparing(HostEndpointUpdate::id))
                .map(FelixAdminController::view).forEach(out::add);
        return out;
    }

    /** One workload endpoint by {@code <namespace>/<name>}, or a host endpoint by name. */
    public EndpointView endpoint(String namespace, String name) {
        if (namespace != null) {
            WorkloadEndpointUpdate w = read(m -> m.workloads().get(namespace + "/" + name));
            if (w == null) {
                throw new NotFound("no local workload endpoint " + namespace + "/" + name);
            }
            return view(w);
        }
        HostEndpointUpdate h = read(m -> m.hostEndpoints().get(name));
        if (h == null) {
            throw new NotFound("no local host endpoint " + name
                    + " (workload endpoints are addressed as /endpoints/<namespace>/<name>)");
        }
        return view(h);
    }

    public List<PolicyView> policies() {
        return read(m -> Map.copyOf(m.policies())).entrySet().stream()
                .map(e -> new PolicyView(e.getKey().toString(), e.getKey().tier(), e.getKey().namespace(),
                        e.getKey().name(), e.getKey().kind().kind(), e.getValue()))
                .sorted(Comparator.comparing(PolicyView::id)).toList();
    }

    public Map<String, CompiledPolicy> profiles() {
        return read(m -> new TreeMap<>(m.profiles()));
    }

    public List<IpSetSummary> ipSets() {
        return read(m -> m.ipSets().entrySet().stream()
                .map(e -> new IpSetSummary(e.getKey(), String.valueOf(e.getValue().type()),
                        e.getValue().members().size())).toList());
    }

    public IpSetView ipSet(String id) {
        DataplaneModel.IpSet s = read(m -> m.ipSets().get(id));
        if (s == null) {
            throw new NotFound("no IP set " + id);
        }
        return new IpSetView(id, String.valueOf(s.type()),
                s.members().stream().map(IpSetMember::toString).sorted().toList());
    }

    public List<RouteUpdate> routes() {
        return read(m -> List.copyOf(m.routes().values()));
    }

    public Map<String, String> config() {
        return read(m -> new TreeMap<>(m.config().effective()));
    }

    public Map<String, Object> status() {
        ApplyStatus last = daemon.lastApply();
        Map<String, Object> out = new TreeMap<>();
        out.put("lastApply", last);
        out.put("syncerStatus", daemon.syncerStatus().name());
        out.put("inSync", state.dataplane().inSync());
        out.put("dataplane", state.dataplane().getClass().getSimpleName());
        // FelixConfiguration fields set away from their default that this felix does not act on
        out.put("unsupportedConfig", read(m -> m.config().unsupportedSettings()));
        return out;
    }

    private static EndpointView view(WorkloadEndpointUpdate w) {
        return new EndpointView("workload", w.id(), w.interfaceName(), w.ipv4Nets(), w.ipv6Nets(), w.profileIds(),
                w.ingress().stream().map(TierView::of).toList(), w.egress().stream().map(TierView::of).toList());
    }

    private static EndpointView view(HostEndpointUpdate h) {
        return new EndpointView("host", h.id(), h.interfaceName(), h.expectedIpv4(), h.expectedIpv6(), h.profileIds(),
                h.ingress().stream().map(TierView::of).toList(), h.egress().stream().map(TierView::of).toList());
    }
}
