package calico.ctl;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.k8s.NetworkPolicyConverter;
import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.validation.ResourceValidator;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.etcd.IpamBackendForm;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code calicoctl datastore migrate}: moving a cluster's Calico data from etcd to the kubernetes datastore as
 * Calico's calicoctl does. {@code lock} sets ClusterInformation's {@code datastoreReady} to false, so that
 * components stop using the datastore and IPAM stands still; {@code export} (etcd, locked) writes every
 * resource kind as a YAML list, then the cluster information, then IPAM in its backend form, the three parts
 * separated by {@code ===}; {@code import} (kubernetes, empty of Calico resources) reads that back and leaves
 * the datastore locked; {@code unlock} sets {@code datastoreReady} back to true.
 */
final class DatastoreMigration {

    /** The kinds an export holds, in the order Calico writes them (workload endpoints and profiles are derived). */
    static final List<ResourceKind> EXPORTED = List.of(ResourceKind.IP_POOL, ResourceKind.BGP_PEER, ResourceKind.TIER,
            ResourceKind.GLOBAL_NETWORK_POLICY, ResourceKind.STAGED_GLOBAL_NETWORK_POLICY,
            ResourceKind.GLOBAL_NETWORK_SET, ResourceKind.HOST_ENDPOINT, ResourceKind.KUBE_CONTROLLERS_CONFIGURATION,
            ResourceKind.NETWORK_POLICY, ResourceKind.STAGED_NETWORK_POLICY,
            ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY, ResourceKind.NETWORK_SET, ResourceKind.NODE,
            ResourceKind.BGP_CONFIGURATION, ResourceKind.FELIX_CONFIGURATION, ResourceKind.IP_RESERVATION,
            ResourceKind.BGP_FILTER);

    /** The IPAM part's sections, by the names Calico gives them. */
    private static final Map<String, ResourceKind> IPAM = new LinkedHashMap<>();

    static {
        IPAM.put("block_affinities", ResourceKind.BLOCK_AFFINITY);
        IPAM.put("blocks", ResourceKind.IPAM_BLOCK);
        IPAM.put("handles", ResourceKind.IPAM_HANDLE);
        IPAM.put("config", ResourceKind.IPAM_CONFIGURATION);
    }

    private static final String SEPARATOR = "===\n";
    private static final ResourceKey CLUSTER_INFO = ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, null, "default");

    private final Datastore store;
    private final DatastoreConfig.Type type;
    private final PrintStream out;
    private final ResourceCodec codec = ResourceCodec.get();

    DatastoreMigration(Datastore store, DatastoreConfig.Type type, PrintStream out) {
        this.store = store;
        this.type = type;
        this.out = out;
    }

    /** {@return whether the datastore is locked}: ClusterInformation {@code default} says {@code datastoreReady: false}. */
    static boolean locked(Datastore store) {
        return store.get(CLUSTER_INFO).map(ClusterInformation.class::cast)
                .map(c -> Boolean.FALSE.equals(c.spec().datastoreReady())).orElse(false);
    }

    void lock(boolean lock) {
        var current = store.get(CLUSTER_INFO).map(ClusterInformation.class::cast);
        if (current.isEmpty() && !lock) {
            throw new DatastoreException.NotFound(CLUSTER_INFO);
        }
        if (current.isEmpty()) {
            // As calico-node would at start-up: a cluster without its information gets it, locked.
            store.create(new ClusterInformation(ObjectMeta.named("default"), new ClusterInformationSpec(
                    UUID.randomUUID().toString().replace("-", ""), null, CalicoCtl.VERSION, false, null)));
        } else {
            ClusterInformationSpec s = current.get().spec();
            store.update(new ClusterInformation(current.get().metadata(), new ClusterInformationSpec(s.clusterGUID(),
                    s.clusterType(), s.calicoVersion(), !lock, s.variant())));
        }
        out.println(lock ? "Datastore locked." : "Datastore unlocked.");
    }

    /** Writes the export to standard output; the datastore must be etcd, and locked. */
    void export() {
        if (!locked(store)) {
            throw new IllegalStateException("Datastore is not locked. Run the `calicoctl datastore migrate lock` command"
                    + " in order to begin migration.");
        }
        if (type != DatastoreConfig.Type.ETCDV3) {
            throw new IllegalStateException("Invalid datastore type: " + type.envName()
                    + " to export from for datastore migration. Datastore type must be etcdv3");
        }
        Map<String, String> k8sNames = kubernetesNodeNames();
        StringBuilder sb = new StringBuilder();
        for (ResourceKind kind : EXPORTED) {
            List<Resource> items = new ArrayList<>();
            for (Resource r : store.list(kind).items()) {
                if (kind == ResourceKind.NETWORK_POLICY && NetworkPolicyConverter.kubernetesName(r.metadata().name()).isPresent()) {
                    continue; // a Kubernetes policy comes back from Kubernetes itself
                }
                items.add(renamedForKubernetes(r, k8sNames));
            }
            ObjectNode list = (ObjectNode) codec.toListTree(kind, items, null);
            ((ObjectNode) list.path("metadata")).remove("resourceVersion");
            list.path("items").forEach(i -> stripServerFields((ObjectNode) i.path("metadata")));
            sb.append(codec.writeYaml(list)).append("---\n");
        }
        sb.append(SEPARATOR);
        Resource info = store.get(CLUSTER_INFO).orElseThrow(() -> new DatastoreException.NotFound(CLUSTER_INFO));
        JsonNode infoTree = codec.toTree(info);
        stripServerFields((ObjectNode) infoTree.path("metadata"));
        sb.append(codec.writePrettyJson(infoTree)).append('\n');
        sb.append(SEPARATOR);
        ObjectNode ipam = codec.jsonMapper().createObjectNode();
        IPAM.forEach((section, kind) -> {
            List<Resource> items = store.list(kind).items();
            if (kind != ResourceKind.IPAM_CONFIGURATION && !items.isEmpty()) {
                requireSameNodeNames(k8sNames);
            }
            if (kind == ResourceKind.IPAM_CONFIGURATION) {
                items.stream().findFirst().ifPresent(r -> ipam.set(section, entry(r)));
            } else if (!items.isEmpty()) {
                ArrayNode a = ipam.putArray(section);
                items.forEach(r -> a.add(entry(r)));
            }
        });
        sb.append(codec.writePrettyJson(ipam)).append('\n');
        out.print(sb);
        out.flush();
    }

    /** Imports an export into this (kubernetes, empty) datastore and leaves it locked. */
    void importFrom(String text) {
        if (type != DatastoreConfig.Type.KUBERNETES) {
            throw new IllegalStateException("Invalid datastore type: " + type.envName()
                    + " to import to for datastore migration. Datastore type must be kubernetes");
        }
        requireEmpty();
        String[] parts = text.split(SEPARATOR, -1);
        if (parts.length != 3) {
            throw new IllegalArgumentException("Error while reading migration file: the file is improperly formatted:"
                    + " expected 3 parts separated by '===', found " + parts.length
                    + ". Try recreating it with 'calicoctl datastore migrate export'");
        }
        List<Resource> resources = new ArrayList<>();
        String yaml = parts[0].strip();
        if (yaml.endsWith("---")) { // each kind's list ends with a separator, the last one too
            yaml = yaml.substring(0, yaml.length() - 3);
        }
        for (Resource r : codec.parseAll(yaml)) {
            ResourceValidator.get().defaultAndValidate(r);
            resources.add(r);
        }
        List<Resource> ipam = ipamOf(parts[2]);
        if (ipam.isEmpty()) {
            throw new IllegalArgumentException("No IPAM resources specified in file");
        }
        if (!locked(store)) {
            lock(true);
        }
        int applied = 0;
        for (Resource r : resources) {
            if (r.resourceKind() == ResourceKind.NODE) {
                var existing = store.get(r.key());
                if (existing.isEmpty()) {
                    out.println("[WARNING] Attempted to import node " + r.metadata().name() + " from etcd that"
                            + " references a non-existent Kubernetes node. Skipping that node.");
                    continue;
                }
                store.update(r.withMetadata(existing.get().metadata()));
            } else if (derived(r.resourceKind(), r.metadata().name()) && store.get(r.key()).isPresent()) {
                // e.g. the default tier, which this cluster made itself: the export's version replaces it
                store.update(r.withMetadata(r.metadata().withResourceVersion(
                        store.get(r.key()).orElseThrow().metadata().resourceVersion())));
            } else {
                store.create(r);
            }
            applied++;
        }
        out.println("Successfully applied " + applied + " resource(s)");
        copyClusterIdentity(parts[1]);
        out.println("Importing IPAM resources");
        ipam.forEach(store::create);
        out.println("Successfully applied " + ipam.size() + " IPAM resource(s)");
        out.println("Datastore information successfully imported. Please refer to the datastore migration"
                + " documentation for next steps.");
    }

    private ObjectNode entry(Resource r) {
        ObjectNode e = codec.jsonMapper().createObjectNode();
        e.put("Key", IpamBackendForm.key(r));
        e.set("Value", IpamBackendForm.value(r, codec));
        e.put("TTL", 0);
        return e;
    }

    private List<Resource> ipamOf(String json) {
        JsonNode tree;
        try {
            tree = codec.jsonMapper().readTree(json);
        } catch (java.io.IOException e) {
            throw new ResourceParseException("IPAM", "is not JSON: " + e.getMessage());
        }
        List<Resource> out = new ArrayList<>();
        IPAM.forEach((section, kind) -> {
            JsonNode s = tree.path(section);
            List<JsonNode> entries = new ArrayList<>();
            if (s.isArray()) {
                s.forEach(entries::add);
            } else if (s.isObject()) {
                entries.add(s);
            }
            for (int i = 0; i < entries.size(); i++) {
                JsonNode e = entries.get(i);
                String where = section + (s.isArray() ? "[" + i + "]" : "");
                Resource r = IpamBackendForm.read(e.path("Key").asText(), e.path("Value"), codec)
                        .filter(x -> x.resourceKind() == kind)
                        .orElseThrow(() -> new ResourceParseException(where + ".Key", "\"" + e.path("Key").asText()
                                + "\" is not the key of a " + kind.kind()));
                out.add(r.withMetadata(r.metadata().withCreation(null, null)));
            }
        });
        return out;
    }

    /** Calico's import wants no Calico data beside nodes, Kubernetes' own policies and their admin policies. */
    private void requireEmpty() {
        for (ResourceKind kind : EXPORTED) {
            if (kind == ResourceKind.NODE || !store.presents(kind)) {
                continue;
            }
            for (Resource r : store.list(kind).items()) {
                if (!derived(kind, r.metadata().name())) {
                    throw new IllegalStateException("Datastore already has Calico resources: Found existing Calico "
                            + kind.kind() + " resource. Clear out all Calico resources by deleting all Calico CRDs.");
                }
            }
        }
        for (ResourceKind kind : IPAM.values()) {
            if (!store.list(kind).items().isEmpty()) {
                throw new IllegalStateException("Datastore already has Calico resources: Found existing IPAM resources."
                        + " Clear out all Calico resources by deleting all Calico CRDs.");
            }
        }
    }

    /** Resources a kubernetes cluster makes itself: Kubernetes' own and admin policies, and their tiers. */
    private static boolean derived(ResourceKind kind, String name) {
        return NetworkPolicyConverter.kubernetesName(name).isPresent() || name.startsWith("kanp.")
                || name.startsWith("kbanp.")
                || (kind == ResourceKind.TIER && List.of("default", "kube-admin", "kube-baseline").contains(name));
    }

    /** The exported cluster keeps its identity: the GUID and version move with it. */
    private void copyClusterIdentity(String json) {
        ClusterInformation from = (ClusterInformation) codec.parse(json);
        ClusterInformation to = (ClusterInformation) store.get(CLUSTER_INFO)
                .orElseThrow(() -> new DatastoreException.NotFound(CLUSTER_INFO));
        ClusterInformationSpec s = to.spec();
        store.update(new ClusterInformation(to.metadata(), new ClusterInformationSpec(from.spec().clusterGUID(),
                s.clusterType(), from.spec().calicoVersion(), s.datastoreReady(), s.variant())));
    }

    /** Each etcd node's Kubernetes name (its {@code k8s} orchestrator reference), which the export must use. */
    private Map<String, String> kubernetesNodeNames() {
        Map<String, String> names = new LinkedHashMap<>();
        for (Resource r : store.list(ResourceKind.NODE).items()) {
            Node n = (Node) r;
            String k8s = n.spec().orchRefs().stream().filter(o -> "k8s".equals(o.orchestrator()))
                    .map(NodeSpec.OrchRef::nodeName).findFirst().orElseThrow(() -> new IllegalStateException(
                            "Node " + n.metadata().name() + " missing a 'k8s' orchestrator reference. Unable to"
                                    + " export data unless every node has a 'k8s' orchestrator reference"));
            names.put(n.metadata().name(), k8s);
        }
        return names;
    }

    /** A node under its Kubernetes name; a per-node configuration ({@code node.<name>}) likewise. */
    private Resource renamedForKubernetes(Resource r, Map<String, String> k8sNames) {
        String name = r.metadata().name();
        if (r.resourceKind() == ResourceKind.NODE) {
            return r.withMetadata(r.metadata().withName(k8sNames.get(name)));
        }
        if ((r.resourceKind() == ResourceKind.FELIX_CONFIGURATION || r.resourceKind() == ResourceKind.BGP_CONFIGURATION)
                && name.startsWith("node.") && k8sNames.containsKey(name.substring(5))) {
            return r.withMetadata(r.metadata().withName("node." + k8sNames.get(name.substring(5))));
        }
        return r;
    }

    /**
     * IPAM data names nodes in many places (affinities, block attributes, tunnel handles); unlike Calico's, this
     * export does not rename them, so it refuses a cluster whose etcd and Kubernetes node names differ.
     */
    private static void requireSameNodeNames(Map<String, String> k8sNames) {
        k8sNames.forEach((etcd, k8s) -> {
            if (!etcd.equals(k8s)) {
                throw new IllegalStateException("Node " + etcd + " is Kubernetes node " + k8s + ": this calicoctl"
                        + " cannot rename nodes in IPAM data, so the IPAM part cannot be exported");
            }
        });
    }

    private static void stripServerFields(ObjectNode meta) {
        List.of("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                "generation", "managedFields").forEach(meta::remove);
    }
}
