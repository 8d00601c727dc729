package calico.cni.plugin;

import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.cni.config.NetConf;
import calico.cni.spec.CniError;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResponse;
import calico.cni.spec.CniResult;
import calico.cni.spec.CniVersions;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.VethLinks;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.Inet6Address;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Calico's CNI plugin: one {@link CniRequest} in, stdout and exit status out. Every failure is a
 * CNI error object, and an ADD that fails part-way undoes what it did (endpoint, veth,
 * addresses) before answering, so the runtime never has to clean up after a failed ADD.
 */
public final class CalicoCni {
    private static final String ORCHESTRATOR_LABEL = "projectcalico.org/orchestrator";
    private static final String NAMESPACE_LABEL = "projectcalico.org/namespace";
    private static final String SERVICE_ACCOUNT_LABEL = "projectcalico.org/serviceaccount";

    private final ObjectMapper json;
    private final String hostname;
    private final DatastoreCache datastores;
    private final WorkloadNetwork network;
    private final java.io.PrintStream stderr;

    public CalicoCni(ObjectMapper json, String hostname, DatastoreCache datastores, WorkloadNetwork network) {
        this(json, hostname, datastores, network, System.err);
    }

    /** With {@code stderr} as the log destination of calls whose configuration names no {@code log_file_path}. */
    public CalicoCni(ObjectMapper json, String hostname, DatastoreCache datastores, WorkloadNetwork network,
                     java.io.PrintStream stderr) {
        this.json = json;
        this.hostname = hostname;
        this.datastores = datastores;
        this.network = network;
        this.stderr = stderr;
    }

    public CniResponse handle(CniRequest req) {
        String version = CniVersions.LATEST;
        CniLog log = CniLog.off();
        try {
            String command = req.command();
            if (command.equals("VERSION")) {
                return version(req);
            }
            if (!List.of("ADD", "DEL", "CHECK", "STATUS", "GC").contains(command)) {
                throw new CniError(CniError.INVALID_ENVIRONMENT,
                        "CNI_COMMAND: '" + command + "' is not ADD, DEL, CHECK, STATUS or VERSION");
            }
            version = peekVersion(req);
            NetConf conf = NetConf.parse(json, req.stdin(), hostname);
            version = conf.cniVersion();
            log = CniLog.forCall(conf, req, stderr);
            log.debug("configuration: cniVersion " + version + ", datastore_type " + conf.datastoreType()
                    + ", ipam " + conf.ipam().type() + ", nodename " + conf.nodename() + ", mtu " + conf.mtu()
                    + ", CNI_NETNS " + req.optional("CNI_NETNS") + ", CNI_ARGS " + req.optional("CNI_ARGS"));
            return switch (command) {
                case "ADD" -> ok(add(conf, req, log).toJson(json, version));
                case "DEL" -> {
                    del(conf, req, log);
                    yield new CniResponse(0, "");
                }
                case "CHECK" -> {
                    check(conf, req);
                    log.info("CHECK passed");
                    yield new CniResponse(0, "");
                }
                case "GC" -> new CniResponse(0, "");
                default -> {
                    status(conf);
                    yield new CniResponse(0, "");
                }
            };
        } catch (CniError e) {
            log.error("failed with code " + e.code() + ": " + e.getMessage());
            return error(e, version);
        } catch (RuntimeException e) {
            log.error("internal error: " + e);
            return error(new CniError(CniError.INTERNAL, "internal error: " + e), version);
        }
    }

    private CniResponse version(CniRequest req) {
        ObjectNode o = json.createObjectNode();
        o.put("cniVersion", peekVersion(req));
        CniVersions.SUPPORTED.forEach(o.putArray("supportedVersions")::add);
        return ok(o);
    }

    // ------------------------------------------------------------------ ADD

    private CniResult add(NetConf conf, CniRequest req, CniLog log) {
        WorkloadId id = WorkloadId.of(req, conf.nodename());
        String netnsPath = req.required("CNI_NETNS");
        Datastore ds = datastores.get(conf);
        IpamBackend ipam = ipam(conf, ds);
        Optional<WorkloadEndpoint> existing = endpoint(ds, id);
        if (existing.isPresent() && id.containerId().equals(existing.get().spec().containerID())
                && network.exists(id.hostVeth())) {
            // A repeated ADD for a container already networked: the same answer, nothing new allocated.
            log.info("already networked (endpoint " + id.endpointName() + ", " + id.hostVeth() + "): same result");
            return merge(conf.prevResult(), resultOf(existing.get(), id, netnsPath));
        }
        // Read before anything is allocated: an unknown pod fails the ADD with nothing to undo.
        PodLookup.PodInfo pod = id.kubernetes() && conf.kubeconfig() != null && "k8s".equals(conf.policyType())
                ? PodLookup.get(conf.kubeconfig(), id.namespace(), id.pod()) : null;
        try (NetNamespace ns = openNetns(netnsPath)) {
            if (network.exists(id.hostVeth())) {
                // Left by an earlier sandbox of the same pod (or a half-done ADD): Calico replaces it.
                log.warning("replacing " + id.hostVeth() + ", left by an earlier sandbox of the pod");
                network.tearDown(id.hostVeth());
            }
            if (existing.isPresent() && id.containerId().equals(existing.get().spec().containerID())) {
                ipam.release(conf, req, id); // a retried ADD of a half-networked container starts afresh
            }
            log.debug("assigning addresses for handle " + id.handleId() + " (namespace labels "
                    + (pod == null || pod.namespaceLabels() == null ? "unknown" : pod.namespaceLabels()) + ")");
            List<IpPrefix> ips = ipam.assign(conf, req, id, pod == null ? null : pod.namespaceLabels());
            log.debug("assigned " + ips.stream().map(CalicoCni::format).toList());
            boolean networked = false;
            try {
                List<CniResult.Interface> ifs = network.setUp(ns, id.hostVeth(), id.ifName(), conf.mtu(), ips);
                networked = true;
                log.debug("veth " + id.hostVeth() + " <-> " + id.ifName() + " in " + netnsPath + " set up");
                writeEndpoint(ds, id, existing, ips, ifs.get(1).mac(), pod);
                log.info("networked " + id.namespace() + "/" + id.pod() + ": " + ips.stream().map(CalicoCni::format).toList()
                        + " on " + id.hostVeth() + ", endpoint " + id.endpointName());
                return merge(conf.prevResult(), result(ifs, ips));
            } catch (RuntimeException e) {
                log.warning("undoing after failure: " + e.getMessage());
                if (networked) {
                    undo(e, () -> network.tearDown(id.hostVeth()));
                }
                undo(e, () -> ipam.release(conf, req, id));
                throw e;
            }
        }
    }

    private void writeEndpoint(Datastore ds, WorkloadId id, Optional<WorkloadEndpoint> existing, List<IpPrefix> ips,
                               String mac, PodLookup.PodInfo pod) {
        Map<String, String> labels = new LinkedHashMap<>();
        List<String> profiles = new ArrayList<>();
        if (pod != null) {
            labels.putAll(pod.labels());
        }
        labels.put(NAMESPACE_LABEL, id.namespace());
        labels.put(ORCHESTRATOR_LABEL, id.orchestrator());
        if (id.kubernetes()) {
            profiles.add("kns." + id.namespace());
        }
        String serviceAccount = pod == null ? null : pod.serviceAccount();
        if (serviceAccount != null) {
            labels.put(SERVICE_ACCOUNT_LABEL, serviceAccount);
            profiles.add("ksa." + id.namespace() + "." + serviceAccount);
        }
        List<String> nets = ips.stream().map(CalicoCni::format).toList();
        ObjectMeta meta = new ObjectMeta(id.endpointName(), id.namespace(), pod == null ? null : pod.generateName(), null,
                existing.map(w -> w.metadata().resourceVersion()).orElse(null), null, null, null, labels, null, null, null);
        WorkloadEndpoint wep = new WorkloadEndpoint(meta, new WorkloadEndpointSpec(id.orchestrator(),
                id.kubernetes() ? null : id.containerId(), id.node(), id.containerId(), id.pod(), id.ifName(),
                serviceAccount, nets, null, null, null, profiles, id.hostVeth(), mac, pod == null ? null : pod.ports(), null));
        try {
            if (existing.isPresent()) {
                ds.update(wep);
            } else {
                ds.create(wep);
            }
        } catch (DatastoreException e) {
            throw Datastores.error("write WorkloadEndpoint " + id.endpointName(), e);
        }
    }

    private CniResult result(List<CniResult.Interface> ifs, List<IpPrefix> ips) {
        List<CniResult.Ip> out = new ArrayList<>();
        List<CniResult.RouteEntry> routes = new ArrayList<>();
        boolean v4 = false;
        boolean v6 = false;
        for (IpPrefix p : ips) {
            out.add(new CniResult.Ip(format(p), null, 1));
            if (p.address() instanceof Inet6Address) {
                v6 = true;
            } else {
                v4 = true;
            }
        }
        if (v4) {
            routes.add(new CniResult.RouteEntry("0.0.0.0/0", null));
        }
        if (v6) {
            routes.add(new CniResult.RouteEntry("::/0", null));
        }
        return new CniResult(ifs, out, routes, null);
    }

    private CniResult resultOf(WorkloadEndpoint wep, WorkloadId id, String netnsPath) {
        List<IpPrefix> ips = wep.spec().ipNetworks().stream().map(IpPrefix::parse).toList();
        return result(List.of(new CniResult.Interface(id.hostVeth(), WorkloadNetwork.HOST_MAC, null),
                new CniResult.Interface(id.ifName(), wep.spec().mac(), netnsPath)), ips);
    }

    /** Chained after another plugin: its interfaces and addresses come first, ours are appended. */
    private static CniResult merge(CniResult prev, CniResult ours) {
        if (prev == null) {
            return ours;
        }
        int offset = prev.interfaces().size();
        List<CniResult.Interface> ifs = new ArrayList<>(prev.interfaces());
        ifs.addAll(ours.interfaces());
        List<CniResult.Ip> ips = new ArrayList<>(prev.ips());
        ours.ips().forEach(ip -> ips.add(new CniResult.Ip(ip.address(), ip.gateway(), ip.interfaceIndex() + offset)));
        List<CniResult.RouteEntry> routes = new ArrayList<>(prev.routes());
        routes.addAll(ours.routes());
        return new CniResult(ifs, ips, routes, prev.dns());
    }

    // ------------------------------------------------------------------ DEL

    private void del(NetConf conf, CniRequest req, CniLog log) {
        WorkloadId id = WorkloadId.of(req, conf.nodename());
        Datastore ds = datastores.get(conf);
        Optional<WorkloadEndpoint> wep = endpoint(ds, id);
        boolean ours = wep.isEmpty() || id.containerId().equals(wep.get().spec().containerID());
        String netnsPath = req.optional("CNI_NETNS");
        boolean removedInside = false;
        if (netnsPath != null) {
            try (NetNamespace ns = NetNamespace.open(netnsPath)) {
                // Deleting the pod end removes the pair: it is this container's, whoever owns the host name now.
                removedInside = ns.call(() -> {
                    try (VethLinks v = new VethLinks()) {
                        return v.deleteLink(id.ifName());
                    }
                });
            } catch (NetlinkException e) {
                if (e.errno() != calico.dataplane.netlink.Errno.ENOENT) {
                    throw WorkloadNetwork.wrap(e, "delete " + id.ifName() + " in " + netnsPath);
                }
                // The namespace is gone already: the host end is found by name below.
            }
        }
        if (!removedInside && ours) {
            try {
                network.tearDown(id.hostVeth());
            } catch (RuntimeException e) {
                throw WorkloadNetwork.wrap(e, "delete " + id.hostVeth());
            }
        }
        log.debug("pod end removed: " + removedInside + ", endpoint is this container's: " + ours);
        ipam(conf, ds).release(conf, req, id);
        log.debug("released handle " + id.handleId());
        if (wep.isPresent() && ours) {
            try {
                ds.delete(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, id.namespace(), id.endpointName()), null);
            } catch (DatastoreException.NotFound gone) {
                // deleted meanwhile: DEL is idempotent
            } catch (DatastoreException e) {
                throw Datastores.error("delete WorkloadEndpoint " + id.endpointName(), e);
            }
        }
        log.info("removed " + id.namespace() + "/" + id.pod() + " (handle " + id.handleId() + ")");
    }

    // ------------------------------------------------------------------ CHECK, STATUS

    private void check(NetConf conf, CniRequest req) {
        if (!CniVersions.allowsCheck(conf.cniVersion())) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "cniVersion: CHECK needs 0.4.0 or later, not " + conf.cniVersion());
        }
        if (conf.prevResult() == null) {
            throw new CniError(CniError.INVALID_CONFIG, "prevResult: is required for CHECK");
        }
        WorkloadId id = WorkloadId.of(req, conf.nodename());
        String netnsPath = req.required("CNI_NETNS");
        Datastore ds = datastores.get(conf);
        Optional<WorkloadEndpoint> wep = endpoint(ds, id);
        List<String> problems = new ArrayList<>();
        if (wep.isEmpty() || !id.containerId().equals(wep.get().spec().containerID())) {
            problems.add("WorkloadEndpoint " + id.endpointName() + " of container " + id.containerId() + " does not exist");
        }
        List<CniResult.Interface> ifs = conf.prevResult().interfaces();
        List<IpPrefix> expected = new ArrayList<>();
        for (CniResult.Ip ip : conf.prevResult().ips()) {
            int i = ip.interfaceIndex();
            if (i >= 0 && i < ifs.size() && id.ifName().equals(ifs.get(i).name()) && netnsPath.equals(ifs.get(i).sandbox())) {
                expected.add(IpPrefix.parse(ip.address()));
            }
        }
        try (NetNamespace ns = openNetns(netnsPath)) {
            problems.addAll(network.check(ns, id.hostVeth(), id.ifName(), expected));
        }
        if (!problems.isEmpty()) {
            throw new CniError(CniError.CHECK_FAILED, "CHECK of " + id.containerId() + ": " + String.join("; ", problems));
        }
    }

    private void status(NetConf conf) {
        try {
            datastores.get(conf).get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, "default"));
        } catch (DatastoreException | CniError e) {
            throw new CniError(CniError.NOT_AVAILABLE, "datastore: not available: " + e.getMessage());
        }
    }

    // ------------------------------------------------------------------ helpers

    private IpamBackend ipam(NetConf conf, Datastore ds) {
        return conf.ipam().calico() ? new CalicoIpam(new IpamClient(ds, IpamOptions.defaults())) : new DelegatedIpam(json);
    }

    private static Optional<WorkloadEndpoint> endpoint(Datastore ds, WorkloadId id) {
        try {
            Optional<Resource> r = ds.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, id.namespace(), id.endpointName()));
            return r.map(WorkloadEndpoint.class::cast);
        } catch (DatastoreException e) {
            throw Datastores.error("read WorkloadEndpoint " + id.endpointName(), e);
        }
    }

    private static NetNamespace openNetns(String path) {
        try {
            return NetNamespace.open(path);
        } catch (NetlinkException e) {
            throw new CniError(CniError.UNKNOWN_CONTAINER, "CNI_NETNS: cannot open " + path + ": " + e.errnoName());
        }
    }

    /** Canonical text ({@code fd00::40/128}, not Java's {@code fd00:0:0:0:0:0:0:40/128}), as Calico writes it. */
    static String format(IpPrefix p) {
        return new calico.api.net.Cidr(calico.api.net.IpAddress.of(p.address().getAddress()), p.length()).toString();
    }

    private static void undo(RuntimeException failure, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private String peekVersion(CniRequest req) {
        try {
            JsonNode n = json.readTree(req.stdin());
            String v = n == null ? null : n.path("cniVersion").asText(null);
            return v == null || v.isEmpty() ? CniVersions.LATEST : v;
        } catch (java.io.IOException e) {
            return CniVersions.LATEST;
        }
    }

    private CniResponse ok(ObjectNode o) {
        try {
            return new CniResponse(0, json.writeValueAsString(o));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private CniResponse error(CniError e, String version) {
        try {
            return new CniResponse(1, json.writeValueAsString(e.toJson(json, version)));
        } catch (com.fasterxml.jackson.core.JsonProcessingException x) {
            throw new IllegalStateException(x);
        }
    }
}
