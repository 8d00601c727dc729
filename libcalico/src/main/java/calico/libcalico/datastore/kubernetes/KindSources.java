package calico.libcalico.datastore.kubernetes;

import calico.api.k8s.AdminNetworkPolicyConverter;
import calico.api.k8s.BaselineAdminNetworkPolicyConverter;
import calico.api.k8s.Conversion;
import calico.api.k8s.KubeAdminNetworkPolicy;
import calico.api.k8s.KubeBaselineAdminNetworkPolicy;
import calico.api.k8s.KubeNamespace;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubePod;
import calico.api.k8s.KubeServiceAccount;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.NetworkPolicyConverter;
import calico.api.k8s.PodConverter;
import calico.api.k8s.ProfileConverter;
import calico.api.k8s.WorkloadEndpointNames;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.NetworkPolicy;
import calico.api.model.Profile;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which Kubernetes resources present each Calico kind, and how (see
 * {@code libcalico/design/kubernetes-datastore.md} for the table). Every kind is backed by its
 * own custom resource except:
 *
 * <ul>
 *   <li>WorkloadEndpoint: Pods only ({@code <node>-k8s-<pod>-eth0});</li>
 *   <li>Profile: Namespaces ({@code kns.<ns>}) and ServiceAccounts ({@code ksa.<ns>.<sa>});</li>
 *   <li>NetworkPolicy: Calico's custom resource plus Kubernetes NetworkPolicies ({@code knp.default.<name>});</li>
 *   <li>GlobalNetworkPolicy: Calico's custom resource plus AdminNetworkPolicies
 *       ({@code kanp.adminnetworkpolicy.<name>}) and BaselineAdminNetworkPolicies
 *       ({@code kbanp.baselineadminnetworkpolicy.<name>}), {@code policy.networking.k8s.io/v1alpha1};</li>
 *   <li>Node: Kubernetes Nodes, with Calico's data in their annotations;</li>
 *   <li>KubernetesService: Kubernetes Services, read-only (for felix's flow logs);</li>
 *   <li>KubernetesEndpointSlice: {@code discovery.k8s.io/v1} EndpointSlices, read-only (for felix's
 *       {@code services} rule matches).</li>
 * </ul>
 */
final class KindSources {

    private static final Logger LOG = LoggerFactory.getLogger(KindSources.class);

    private final ObjectMapper json = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
    private final CrdCodec crds = new CrdCodec();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final NodeConverter nodes = new NodeConverter(json);
    private final Map<ResourceKind, List<Source>> byKind = new EnumMap<>(ResourceKind.class);

    KindSources() {
        for (ResourceKind kind : ResourceKind.values()) {
            byKind.put(kind, switch (kind) {
                case WORKLOAD_ENDPOINT -> List.of(pods());
                case PROFILE -> List.of(namespaces(), serviceAccounts());
                case NETWORK_POLICY -> List.of(crd(kind), kubernetesNetworkPolicies());
                case GLOBAL_NETWORK_POLICY -> List.of(crd(kind), adminNetworkPolicies(), baselineAdminNetworkPolicies());
                case NODE -> List.of(kubernetesNodes());
                case KUBERNETES_SERVICE -> List.of(kubernetesServices());
                case KUBERNETES_ENDPOINT_SLICE -> List.of(endpointSlices());
                default -> List.of(crd(kind));
            });
        }
    }

    List<Source> sources(ResourceKind kind) {
        return byKind.get(kind);
    }

    CrdCodec crds() {
        return crds;
    }

    NodeConverter nodes() {
        return nodes;
    }

    /**
     * {@return why Calico's kubernetes datastore does not do {@code operation} (create, update,
     * delete) on {@code key}}, or empty when it does: to the kind's custom resource, for a Node
     * update into the Kubernetes Node, for a WorkloadEndpoint into its Pod's annotations.
     */
    static Optional<String> readOnly(ResourceKey key, String operation) {
        if (key.kind() == ResourceKind.NODE && operation.equals("update")) {
            return Optional.empty(); // written back into the Kubernetes Node's annotations, as Calico does
        }
        return switch (key.kind()) {
            case WORKLOAD_ENDPOINT -> Optional.empty(); // written into the Pod's annotations (PodAnnotations)
            case PROFILE -> Optional.of("Profile is read-only in the kubernetes datastore: profiles are presented "
                    + "from Namespaces (kns.*) and ServiceAccounts (ksa.*)");
            case NODE -> Optional.of("Node cannot be created or deleted in the kubernetes datastore: nodes are "
                    + "the Kubernetes Nodes (an update writes Calico's fields into their projectcalico.org/* annotations)");
            case KUBERNETES_SERVICE -> Optional.of("KubernetesService is read-only: it is the Kubernetes Service "
                    + key.namespace() + "/" + key.name() + "; change the Service instead");
            case KUBERNETES_ENDPOINT_SLICE -> Optional.of("KubernetesEndpointSlice is read-only: it is the "
                    + "Kubernetes EndpointSlice " + key.namespace() + "/" + key.name()
                    + "; change the EndpointSlice (or its Service) instead");
            case NETWORK_POLICY -> key.name().startsWith(NetworkPolicyConverter.NAME_PREFIX)
                    ? Optional.of("NetworkPolicy " + key.namespace() + "/" + key.name() + " is read-only: names "
                            + "starting with " + NetworkPolicyConverter.NAME_PREFIX + " are Kubernetes NetworkPolicies; "
                            + "change the Kubernetes NetworkPolicy instead")
                    : Optional.empty();
            case GLOBAL_NETWORK_POLICY -> adminKind(key.name())
                    .map(kind -> "GlobalNetworkPolicy " + key.name() + " is read-only: it presents the " + kind
                            + " of that name (after the prefix); change the " + kind + " instead");
            default -> Optional.empty();
        };
    }

    /** {@return the Kubernetes kind a converted admin policy name comes from}, empty for Calico's own names. */
    private static Optional<String> adminKind(String name) {
        if (AdminNetworkPolicyConverter.kubernetesName(name).isPresent()) {
            return Optional.of(KubeAdminNetworkPolicy.KIND);
        }
        return BaselineAdminNetworkPolicyConverter.kubernetesName(name).map(n -> KubeBaselineAdminNetworkPolicy.KIND);
    }

    // ---------------------------------------------------------------- sources

    private Source crd(ResourceKind kind) {
        return new Source(CrdCodec.context(kind), cr -> Converted.of(crds.fromCustomResource(kind, cr)),
                key -> Optional.of(new Source.ObjectRef(key.namespace(), key.name())),
                obj -> named(kind, obj, name -> name));
    }

    private Source pods() {
        return new Source(core("Pod", "pods", true), this::pod, key -> {
            WorkloadEndpointNames.Identifiers ids;
            try {
                ids = WorkloadEndpointNames.parse(key.name());
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
            boolean k8s = PodConverter.ORCHESTRATOR.equals(ids.orchestrator()) && PodConverter.ENDPOINT.equals(ids.endpoint());
            return k8s ? Optional.of(new Source.ObjectRef(key.namespace(), ids.workload())) : Optional.empty();
        }, obj -> {
            String node = obj.path("spec").path("nodeName").asText("");
            return node.isEmpty() ? List.of()
                    : named(ResourceKind.WORKLOAD_ENDPOINT, obj, pod -> WorkloadEndpointNames.forPod(node, pod));
        });
    }

    private Converted pod(JsonNode obj) {
        KubePod pod = read(obj, KubePod.class);
        Optional<? extends Resource> wep = converter.workloadEndpoint(pod);
        if (wep.isPresent()) {
            return Converted.of(wep.get());
        }
        String node = pod.spec().nodeName();
        if (node == null || node.isEmpty() || pod.metadata() == null) {
            return Converted.none();
        }
        // Scheduled but not (or no longer) networked by Calico: its endpoint, if any, is gone.
        try {
            return Converted.absent(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, pod.metadata().namespace(),
                    WorkloadEndpointNames.forPod(node, pod.metadata().name())));
        } catch (IllegalArgumentException unnameable) {
            return Converted.none();
        }
    }

    private Source kubernetesNetworkPolicies() {
        ResourceDefinitionContext ctx = new ResourceDefinitionContext.Builder()
                .withGroup("networking.k8s.io").withVersion("v1")
                .withKind(KubeNetworkPolicy.KIND).withPlural("networkpolicies").withNamespaced(true).build();
        return new Source(ctx, obj -> {
            Conversion<NetworkPolicy> c = converter.networkPolicy(read(obj, KubeNetworkPolicy.class));
            if (!c.isComplete()) {
                LOG.warn("NetworkPolicy {}/{}: rules left out of {}: {}", c.value().metadata().namespace(),
                        obj.path("metadata").path("name").asText(), c.value().metadata().name(), c.droppedRules());
            }
            return Converted.of(c.value());
        }, key -> NetworkPolicyConverter.kubernetesName(key.name())
                .map(n -> new Source.ObjectRef(key.namespace(), n)),
                obj -> named(ResourceKind.NETWORK_POLICY, obj, NetworkPolicyConverter::policyName));
    }

    private Source adminNetworkPolicies() {
        return new Source(admin(KubeAdminNetworkPolicy.KIND, "adminnetworkpolicies"),
                obj -> reportingDropped(KubeAdminNetworkPolicy.KIND, obj,
                        converter.adminNetworkPolicy(read(obj, KubeAdminNetworkPolicy.class))),
                key -> AdminNetworkPolicyConverter.kubernetesName(key.name()).map(n -> new Source.ObjectRef(null, n)),
                obj -> named(ResourceKind.GLOBAL_NETWORK_POLICY, obj, AdminNetworkPolicyConverter::policyName));
    }

    private Source baselineAdminNetworkPolicies() {
        return new Source(admin(KubeBaselineAdminNetworkPolicy.KIND, "baselineadminnetworkpolicies"),
                obj -> reportingDropped(KubeBaselineAdminNetworkPolicy.KIND, obj,
                        converter.baselineAdminNetworkPolicy(read(obj, KubeBaselineAdminNetworkPolicy.class))),
                key -> BaselineAdminNetworkPolicyConverter.kubernetesName(key.name())
                        .map(n -> new Source.ObjectRef(null, n)),
                obj -> named(ResourceKind.GLOBAL_NETWORK_POLICY, obj, BaselineAdminNetworkPolicyConverter::policyName));
    }

    /** Calico logs the rules it could not convert and presents the rest (a broken Deny/Pass rule as a bare Deny). */
    private static Converted reportingDropped(String kind, JsonNode obj, Conversion<GlobalNetworkPolicy> c) {
        if (!c.isComplete()) {
            LOG.warn("{} {}: rules left out of {}: {}", kind, obj.path("metadata").path("name").asText(),
                    c.value().metadata().name(), c.droppedRules());
        }
        return Converted.of(c.value());
    }

    private static ResourceDefinitionContext admin(String kind, String plural) {
        return new ResourceDefinitionContext.Builder().withGroup("policy.networking.k8s.io").withVersion("v1alpha1")
                .withKind(kind).withPlural(plural).withNamespaced(false).build();
    }

    private Source namespaces() {
        return new Source(core(KubeNamespace.KIND, "namespaces", false),
                obj -> Converted.of(plainRevision(converter.namespaceProfile(read(obj, KubeNamespace.class)), obj)),
                key -> ProfileConverter.namespaceOf(key.name()).map(ns -> new Source.ObjectRef(null, ns)),
                obj -> named(ResourceKind.PROFILE, obj, ProfileConverter::namespaceProfileName));
    }

    private Source serviceAccounts() {
        return new Source(core(KubeServiceAccount.KIND, "serviceaccounts", true),
                obj -> Converted.of(plainRevision(converter.serviceAccountProfile(read(obj, KubeServiceAccount.class)), obj)),
                key -> ProfileConverter.serviceAccountOf(key.name())
                        .map(sa -> new Source.ObjectRef(sa.namespace(), sa.name())),
                obj -> named(ResourceKind.PROFILE, obj, sa -> ProfileConverter.serviceAccountProfileName(
                        obj.path("metadata").path("namespace").asText(""), sa)));
    }

    private Source kubernetesNodes() {
        return new Source(core("Node", "nodes", false), obj -> Converted.of(nodes.convert(obj)),
                key -> Optional.of(new Source.ObjectRef(null, key.name())),
                obj -> named(ResourceKind.NODE, obj, name -> name));
    }

    private Source kubernetesServices() {
        return new Source(core("Service", "services", true), obj -> Converted.of(ServiceConverter.convert(obj)),
                key -> Optional.of(new Source.ObjectRef(key.namespace(), key.name())),
                obj -> named(ResourceKind.KUBERNETES_SERVICE, obj, name -> name));
    }

    private Source endpointSlices() {
        ResourceDefinitionContext ctx = new ResourceDefinitionContext.Builder()
                .withGroup("discovery.k8s.io").withVersion("v1")
                .withKind("EndpointSlice").withPlural("endpointslices").withNamespaced(true).build();
        return new Source(ctx, obj -> Converted.of(EndpointSliceConverter.convert(obj)),
                key -> Optional.of(new Source.ObjectRef(key.namespace(), key.name())),
                obj -> named(ResourceKind.KUBERNETES_ENDPOINT_SLICE, obj, name -> name));
    }

    /**
     * Calico writes a profile's revision as {@code <namespace rv>/<service account rv>}; this
     * datastore's revisions are single numbers (its watches and the syncer compare them), so a
     * profile carries the revision of the one object it comes from.
     */
    private static Profile plainRevision(Profile p, JsonNode obj) {
        String rv = obj.path("metadata").path("resourceVersion").asText("");
        return p.withMetadata(p.metadata().withResourceVersion(rv.isEmpty() ? null : rv));
    }

    /**
     * {@return the one key of {@code kind} an object presents under the Calico name {@code naming}
     * gives its name}, or none when the names cannot form a key.
     */
    private static List<ResourceKey> named(ResourceKind kind, JsonNode obj, java.util.function.UnaryOperator<String> naming) {
        String name = obj.path("metadata").path("name").asText("");
        String ns = obj.path("metadata").path("namespace").asText("");
        try {
            return List.of(ResourceKey.of(kind, kind.namespaced() ? ns : null, naming.apply(name)));
        } catch (IllegalArgumentException unnameable) {
            return List.of();
        }
    }

    private static ResourceDefinitionContext core(String kind, String plural, boolean namespaced) {
        return new ResourceDefinitionContext.Builder()
                .withGroup("").withVersion("v1").withKind(kind).withPlural(plural).withNamespaced(namespaced).build();
    }

    private <T> T read(JsonNode obj, Class<T> type) {
        try {
            return json.treeToValue(obj, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(type.getSimpleName() + " " + obj.path("metadata").path("namespace").asText("")
                    + "/" + obj.path("metadata").path("name").asText("") + " does not decode: " + e.getOriginalMessage(), e);
        }
    }
}
