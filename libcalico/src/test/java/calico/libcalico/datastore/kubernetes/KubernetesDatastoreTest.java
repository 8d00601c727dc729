package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.k8s.DerivedUid;
import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMBlockSpec;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.IPAMHandle;
import calico.api.model.IPAMHandleSpec;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.NetworkPolicySpec;
import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Profile;
import calico.api.model.ProfileSpec;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.Await;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What only the kubernetes datastore does: Calico's CRD layout, and Kubernetes objects presented
 * as Calico resources (Pods → WorkloadEndpoints, Namespaces/ServiceAccounts → Profiles,
 * NetworkPolicies → knp.default.*, Nodes → Nodes, Services → KubernetesServices), read-only, in
 * lists, gets and watches.
 */
class KubernetesDatastoreTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private KubernetesApiServer server;
    private KubernetesClient k8s;
    private KubernetesDatastore store;

    @BeforeEach
    void start() {
        server = new KubernetesApiServer();
        k8s = server.client();
        store = server.datastore();
    }

    @AfterEach
    void stop() {
        store.close();
        server.close();
    }

    // ------------------------------------------------------------------ Calico's CRDs

    @Test
    void calicoResourcesAreStoredAsCalicosCustomResources() {
        Resource created = store.create(new GlobalNetworkSet(ObjectMeta.named("blocked")
                .withLabels(Map.of("role", "deny")).withAnnotations(Map.of("note", "x")),
                new GlobalNetworkSetSpec(List.of("10.0.0.0/8"))));

        GenericKubernetesResource cr = k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.GLOBAL_NETWORK_SET))
                .withName("blocked").get();

        assertThat(cr.getApiVersion()).isEqualTo("crd.projectcalico.org/v1");
        assertThat(cr.getKind()).isEqualTo("GlobalNetworkSet");
        assertThat(cr.getMetadata().getLabels()).containsExactlyEntriesOf(Map.of("role", "deny"));
        assertThat(cr.getMetadata().getAnnotations()).containsEntry("note", "x")
                .containsKey(CrdCodec.METADATA_ANNOTATION);
        assertThat(cr.getMetadata().getAnnotations().get(CrdCodec.METADATA_ANNOTATION))
                .contains("\"creationTimestamp\":\"" + created.metadata().creationTimestamp() + "\"");
        assertThat(cr.getMetadata().getUid()).isEqualTo(DerivedUid.of(created.metadata().uid()));
        assertThat(cr.getMetadata().getResourceVersion()).isEqualTo(created.metadata().resourceVersion());
        assertThat(cr.getAdditionalProperties().get("spec")).isEqualTo(Map.of("nets", List.of("10.0.0.0/8")));
        // Calico's own annotation never leaks into the Calico resource.
        assertThat(store.get(created.key()).orElseThrow().metadata().annotations()).containsExactlyEntriesOf(Map.of("note", "x"));
    }

    /** The apiserver's server-side apply keeps managedFields in ObjectMeta: they must survive the CRD round trip. */
    @Test
    void managedFieldsSurviveTheCustomResource() {
        ObjectMeta.ManagedFieldsEntry entry = new ObjectMeta.ManagedFieldsEntry("kubectl", "Apply",
                "projectcalico.org/v3", "2026-12-01T00:00:00Z", "FieldsV1",
                Map.of("f:spec", Map.of("f:nets", Map.of())), null);
        Resource created = store.create(new GlobalNetworkSet(ObjectMeta.named("applied")
                .withManagedFields(List.of(entry)), new GlobalNetworkSetSpec(List.of("10.0.0.0/8"))));

        assertThat(store.get(created.key()).orElseThrow().metadata().managedFields()).containsExactly(entry);
        Resource updated = store.update(new GlobalNetworkSet(created.metadata().withManagedFields(List.of()),
                new GlobalNetworkSetSpec(List.of("10.1.0.0/16"))));
        assertThat(store.get(updated.key()).orElseThrow().metadata().managedFields()).isEmpty();
    }

    @Test
    void ipamKindsAreStoredAsCalicosIpamCustomResources() {
        IPAMConfiguration config = (IPAMConfiguration) store.create(new IPAMConfiguration(ObjectMeta.named("default"),
                new IPAMConfigurationSpec(true, true, 0)));
        BlockAffinity affinity = (BlockAffinity) store.create(new BlockAffinity(ObjectMeta.named("node-1-10-0-0-0-30"),
                BlockAffinitySpec.of(BlockAffinitySpec.PENDING, "node-1", "10.0.0.0/30")));
        IPAMBlock block = (IPAMBlock) store.create(new IPAMBlock(ObjectMeta.named("10-0-0-0-30"), new IPAMBlockSpec(
                "10.0.0.0/30", "host:node-1", null, java.util.Arrays.asList(0, null, null, null), List.of(1, 2, 3),
                List.of(new IPAMBlockSpec.AllocationAttribute("k8s-pod-network.abc", Map.of())), 1L, Map.of("0", 0L),
                false, null)));
        store.create(new IPAMHandle(ObjectMeta.named("k8s-pod-network.abc"),
                new IPAMHandleSpec("k8s-pod-network.abc", Map.of("10.0.0.0/30", 1), null)));

        GenericKubernetesResource cr = k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.IPAM_CONFIGURATION))
                .withName("default").get();
        assertThat(cr.getKind()).isEqualTo("IPAMConfig");
        assertThat(CrdCodec.context(ResourceKind.IPAM_CONFIGURATION).getPlural()).isEqualTo("ipamconfigs");
        assertThat(cr.getAdditionalProperties().get("spec"))
                .isEqualTo(Map.of("strictAffinity", true, "autoAllocateBlocks", true, "maxBlocksPerHost", 0));
        GenericKubernetesResource blockCr = k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.IPAM_BLOCK))
                .withName("10-0-0-0-30").get();
        assertThat(blockCr.getKind()).isEqualTo("IPAMBlock");
        @SuppressWarnings("unchecked")
        Map<String, Object> spec = (Map<String, Object>) blockCr.getAdditionalProperties().get("spec");
        assertThat(spec).containsEntry("affinity", "host:node-1")
                .containsEntry("allocations", java.util.Arrays.asList(0, null, null, null))
                .containsEntry("unallocated", List.of(1, 2, 3));
        assertThat(k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.BLOCK_AFFINITY))
                .withName("node-1-10-0-0-0-30").get().getAdditionalProperties().get("spec"))
                .isEqualTo(Map.of("state", "pending", "node", "node-1", "cidr", "10.0.0.0/30", "deleted", "false"));
        assertThat(k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.IPAM_HANDLE)).list().getItems()).hasSize(1);

        // Read back equal, and compare-and-swap works on them like on any custom resource.
        assertThat(store.get(config.key()).orElseThrow()).isEqualTo(config);
        assertThat(store.get(block.key()).orElseThrow()).isEqualTo(block);
        store.update(affinity.withMetadata(affinity.metadata()).withSpecState(BlockAffinitySpec.CONFIRMED));
        assertThatThrownBy(() -> store.update(affinity.withSpecState(BlockAffinitySpec.CONFIRMED)))
                .isInstanceOf(DatastoreException.Conflict.class);
    }

    @Test
    void aCustomResourceWrittenByAnotherClientIsReadAsCalicoReadsIt() {
        GenericKubernetesResource tier = new GenericKubernetesResource();
        tier.setApiVersion("crd.projectcalico.org/v1");
        tier.setKind("Tier");
        tier.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("security").build());
        tier.setAdditionalProperty("spec", Map.of("order", 100));
        k8s.genericKubernetesResources(CrdCodec.context(ResourceKind.TIER)).resource(tier).create();

        Resource read = store.get(ResourceKey.of(ResourceKind.TIER, "security")).orElseThrow();

        assertThat(((calico.api.model.Tier) read).spec().order()).isEqualTo(100.0);
        assertThat(read.metadata().creationTimestamp()).isNotBlank(); // the custom resource's, without an annotation
        assertThat(store.list(ResourceKind.TIER).items()).containsExactly(read);
    }

    // ------------------------------------------------------------------ Kubernetes objects presented

    @Test
    void podsArePresentedAsWorkloadEndpoints() {
        namespace("prod", Map.of("team", "a"));
        k8s.pods().inNamespace("prod").resource(pod("web-1", "node-1", "10.0.0.5", Map.of("app", "web"))).create();
        k8s.pods().inNamespace("prod").resource(new PodBuilder(pod("host-1", "node-1", "192.168.0.1", Map.of()))
                .editSpec().withHostNetwork(true).endSpec().build()).create();
        k8s.pods().inNamespace("prod").resource(new PodBuilder(pod("pending", null, null, Map.of())).build()).create();

        List<Resource> weps = store.list(ResourceKind.WORKLOAD_ENDPOINT, "prod", null).items();

        assertThat(weps).hasSize(1);
        WorkloadEndpoint wep = (WorkloadEndpoint) weps.get(0);
        assertThat(wep.metadata().name()).isEqualTo("node--1-k8s-web--1-eth0");
        assertThat(wep.metadata().namespace()).isEqualTo("prod");
        assertThat(wep.metadata().labels()).containsEntry("app", "web")
                .containsEntry("projectcalico.org/namespace", "prod")
                .containsEntry("projectcalico.org/orchestrator", "k8s")
                .containsEntry("projectcalico.org/serviceaccount", "api");
        assertThat(wep.spec().ipNetworks()).containsExactly("10.0.0.5/32");
        assertThat(wep.spec().profiles()).containsExactly("kns.prod", "ksa.prod.api");
        assertThat(wep.spec().node()).isEqualTo("node-1");
        assertThat(store.get(wep.key())).contains(wep);
        assertThat(store.get(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--1-k8s-host--1-eth0"))).isEmpty();
        assertThat(store.list(ResourceKind.WORKLOAD_ENDPOINT, null, "app == 'web'").items()).containsExactly(wep);
        assertThat(store.list(ResourceKind.WORKLOAD_ENDPOINT, null, "app == 'db'").items()).isEmpty();
    }

    @Test
    void namespacesAndServiceAccountsArePresentedAsProfiles() {
        namespace("prod", Map.of("team", "a"));
        k8s.serviceAccounts().inNamespace("prod").resource(new ServiceAccountBuilder().withNewMetadata()
                .withName("api").withLabels(Map.of("tier", "backend")).endMetadata().build()).create();

        List<Resource> profiles = store.list(ResourceKind.PROFILE).items();

        assertThat(profiles).extracting(r -> r.metadata().name()).containsExactly("kns.default", "kns.prod", "ksa.prod.api");
        Profile kns = (Profile) store.get(ResourceKey.of(ResourceKind.PROFILE, "kns.prod")).orElseThrow();
        assertThat(kns.spec().labelsToApply()).containsEntry("pcns.team", "a")
                .containsEntry("pcns.projectcalico.org/name", "prod");
        assertThat(kns.metadata().resourceVersion()).matches("\\d+");
        Profile ksa = (Profile) store.get(ResourceKey.of(ResourceKind.PROFILE, "ksa.prod.api")).orElseThrow();
        assertThat(ksa.spec().labelsToApply()).containsEntry("pcsa.tier", "backend")
                .containsEntry("pcsa.projectcalico.org/name", "api");
        assertThat(store.get(ResourceKey.of(ResourceKind.PROFILE, "kns.nope"))).isEmpty();
        assertThat(store.get(ResourceKey.of(ResourceKind.PROFILE, "some-profile"))).isEmpty();
    }

    @Test
    void kubernetesNetworkPoliciesArePresentedBesideCalicoOnes() {
        namespace("prod", Map.of());
        k8s.network().v1().networkPolicies().inNamespace("prod").resource(new NetworkPolicyBuilder()
                .withNewMetadata().withName("allow-web").endMetadata()
                .withNewSpec().withNewPodSelector().withMatchLabels(Map.of("app", "web")).endPodSelector()
                .addNewIngress().addNewFrom().withNewPodSelector().withMatchLabels(Map.of("role", "fe")).endPodSelector()
                .endFrom().addNewPort().withProtocol("TCP").withPort(new IntOrString(80)).endPort().endIngress()
                .endSpec().build()).create();
        Resource calico = store.create(new NetworkPolicy(ObjectMeta.namespaced("prod", "calico-one"),
                new NetworkPolicySpec(null, 10.0, null, null, "all()", null, null, null)));

        List<Resource> policies = store.list(ResourceKind.NETWORK_POLICY, "prod", null).items();

        assertThat(policies).extracting(r -> r.metadata().name()).containsExactly("calico-one", "knp.default.allow-web");
        assertThat(policies.get(0)).isEqualTo(calico);
        NetworkPolicy knp = (NetworkPolicy) policies.get(1);
        assertThat(knp.spec().tier()).isEqualTo("default");
        assertThat(knp.spec().order()).isEqualTo(1000.0);
        assertThat(knp.spec().selector()).contains("app == 'web'");
        assertThat(knp.spec().ingress()).hasSize(1);
        assertThat(store.get(knp.key())).contains(knp);
        assertThat(store.list(ResourceKind.NETWORK_POLICY, "other", null).items()).isEmpty();
    }

    @Test
    void kubernetesNodesArePresentedWithCalicosAnnotations() {
        k8s.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-1")
                .withLabels(Map.of("kubernetes.io/os", "linux"))
                .withAnnotations(Map.of("projectcalico.org/IPv4Address", "10.0.0.1/24",
                        "projectcalico.org/ASNumber", "64512",
                        "projectcalico.org/IPv4VXLANTunnelAddr", "192.168.5.1",
                        "projectcalico.org/labels", "{\"rack\":\"r1\"}"))
                .endMetadata()
                .withNewSpec().withPodCIDRs("10.244.1.0/24").endSpec()
                .withNewStatus().addNewAddress().withType("InternalIP").withAddress("10.0.0.1").endAddress()
                .addNewAddress().withType("Hostname").withAddress("node-1").endAddress().endStatus()
                .build()).create();

        Node node = (Node) store.get(ResourceKey.of(ResourceKind.NODE, "node-1")).orElseThrow();

        assertThat(node.spec().bgp().ipv4Address()).isEqualTo("10.0.0.1/24");
        assertThat(node.spec().bgp().asNumber().value()).isEqualTo(64512L);
        assertThat(node.spec().ipv4VXLANTunnelAddr()).isEqualTo("192.168.5.1");
        assertThat(node.spec().orchRefs()).containsExactly(new NodeSpec.OrchRef("node-1", "k8s"));
        assertThat(node.spec().addresses()).containsExactly(new NodeSpec.Address("10.0.0.1/24", "CalicoNodeIP"),
                new NodeSpec.Address("10.0.0.1", "InternalIP"));
        assertThat(node.metadata().labels()).containsEntry("kubernetes.io/os", "linux").containsEntry("rack", "r1");
        assertThat(node.status().podCIDRs()).containsExactly("10.244.1.0/24");
        assertThat(store.list(ResourceKind.NODE).items()).containsExactly(node);
    }

    @Test
    void aNodeUpdateIsWrittenIntoTheKubernetesNodesAnnotationsAsCalicoDoes() {
        k8s.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-1")
                .withLabels(Map.of("kubernetes.io/os", "linux"))
                .withAnnotations(Map.of("projectcalico.org/IPv4Address", "10.0.0.1/24", "other", "kept"))
                .endMetadata().build()).create();
        Node before = (Node) store.get(ResourceKey.of(ResourceKind.NODE, "node-1")).orElseThrow();

        Map<String, String> labels = new java.util.HashMap<>(before.metadata().labels());
        labels.put("rack", "r2");
        Node changed = new Node(before.metadata().withLabels(labels), new NodeSpec(
                new NodeSpec.BGP(calico.api.model.ASNumber.of(64513), "10.0.0.2/24", null, null, null),
                "192.168.9.1", null, null, null, before.spec().orchRefs(), null, before.spec().addresses(), null),
                new calico.api.model.NodeStatus("wg-key", null, null));
        Node after = (Node) store.update(changed);

        io.fabric8.kubernetes.api.model.Node k8sNode = k8s.nodes().withName("node-1").get();
        assertThat(k8sNode.getMetadata().getLabels()).containsExactlyEntriesOf(Map.of("kubernetes.io/os", "linux"));
        assertThat(k8sNode.getMetadata().getAnnotations())
                .containsEntry("projectcalico.org/IPv4Address", "10.0.0.2/24")
                .containsEntry("projectcalico.org/ASNumber", "64513")
                .containsEntry("projectcalico.org/IPv4VXLANTunnelAddr", "192.168.9.1")
                .containsEntry("projectcalico.org/WireguardPublicKey", "wg-key")
                .containsEntry("projectcalico.org/labels", "{\"rack\":\"r2\"}")
                .containsEntry("other", "kept");
        assertThat(after.metadata().labels()).containsEntry("rack", "r2").containsEntry("kubernetes.io/os", "linux");
        assertThat(after.spec().bgp().ipv4Address()).isEqualTo("10.0.0.2/24");
        assertThat(after.status().wireguardPublicKey()).isEqualTo("wg-key");
        assertThat(store.get(after.key())).contains(after);
        assertThatThrownBy(() -> store.update(changed)) // still carries before's resourceVersion
                .isInstanceOf(DatastoreException.Conflict.class);
    }

    @Test
    void endpointWritesGoIntoThePodsAnnotationsAsCalicosCniPluginMakesThem() {
        namespace("prod", Map.of());
        k8s.pods().inNamespace("prod").resource(pod("web-1", "node-1", null, Map.of())).create();
        ResourceKey key = ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod", "node--1-k8s-web--1-eth0");
        WorkloadEndpoint before = (WorkloadEndpoint) store.get(key).orElseThrow();
        assertThat(before.spec().ipNetworks()).isEmpty();

        var s = before.spec();
        WorkloadEndpoint wanted = new WorkloadEndpoint(before.metadata().withResourceVersion(null),
                new calico.api.model.WorkloadEndpointSpec(s.orchestrator(), s.workload(), s.node(), "c0ffee", s.pod(),
                        s.endpoint(), s.serviceAccountName(), List.of("10.0.0.9/32"), null, null, null, s.profiles(),
                        s.interfaceName(), null, null, null));
        WorkloadEndpoint created = (WorkloadEndpoint) store.create(wanted);

        Map<String, String> annotations = k8s.pods().inNamespace("prod").withName("web-1").get().getMetadata().getAnnotations();
        assertThat(annotations).containsEntry("cni.projectcalico.org/podIP", "10.0.0.9/32")
                .containsEntry("cni.projectcalico.org/podIPs", "10.0.0.9/32")
                .containsEntry("cni.projectcalico.org/containerID", "c0ffee");
        assertThat(created.spec().ipNetworks()).containsExactly("10.0.0.9/32");
        assertThat(created.spec().containerID()).isEqualTo("c0ffee");
        assertThat(store.get(key)).contains(created);
        assertThatThrownBy(() -> store.delete(key, before.metadata().resourceVersion()))
                .isInstanceOf(DatastoreException.Conflict.class);

        Resource deleted = store.delete(key, created.metadata().resourceVersion());

        assertThat(deleted).isEqualTo(created);
        assertThat(k8s.pods().inNamespace("prod").withName("web-1").get().getMetadata().getAnnotations())
                .containsEntry("cni.projectcalico.org/podIP", "");
        assertThat(((WorkloadEndpoint) store.get(key).orElseThrow()).spec().ipNetworks()).isEmpty();
        assertThatThrownBy(() -> store.delete(ResourceKey.of(ResourceKind.WORKLOAD_ENDPOINT, "prod",
                "node--2-k8s-web--1-eth0"), null)).isInstanceOf(DatastoreException.NotFound.class);
    }

    @Test
    void writesToPresentedKindsAreRefusedNamingTheKind() {
        namespace("prod", Map.of());
        assertThatThrownBy(() -> store.create(new Profile(ObjectMeta.named("p"), new ProfileSpec(null, null, null))))
                .isInstanceOf(DatastoreException.Invalid.class)
                .hasMessageContaining("Profile is read-only in the kubernetes datastore");
        assertThatThrownBy(() -> store.delete(ResourceKey.of(ResourceKind.PROFILE, "kns.prod"), null))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("Profile is read-only");
        assertThatThrownBy(() -> store.create(new Node(ObjectMeta.named("n"), NodeSpec.ofBgp(null))))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("Node cannot be created or deleted");
        assertThatThrownBy(() -> store.create(new NetworkPolicy(ObjectMeta.namespaced("prod", "knp.default.x"),
                new NetworkPolicySpec(null, 10.0, null, null, "all()", null, null, null))))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("knp.default.");
        assertThatThrownBy(() -> store.delete(ResourceKey.of(ResourceKind.NETWORK_POLICY, "prod", "knp.default.x"), null))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("are Kubernetes NetworkPolicies");
        assertThat(store.get(ResourceKey.of(ResourceKind.PROFILE, "kns.prod"))).isPresent();
    }

    @Test
    void kubernetesServicesArePresentedReadOnlyWithTheirAddressesAndPorts() {
        namespace("shop", Map.of());
        k8s.services().inNamespace("shop").resource(TestServices.service("api", "10.96.0.10", 80)).create();
        k8s.services().inNamespace("shop").resource(new ServiceBuilder().withNewMetadata().withName("headless")
                .endMetadata().withNewSpec().withClusterIP("None").addNewPort().withPort(5432).endPort()
                .endSpec().build()).create();

        KubernetesService api = (KubernetesService) store.get(ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "api"))
                .orElseThrow();
        assertThat(api.metadata().labels()).containsExactlyEntriesOf(Map.of("app", "api"));
        assertThat(api.spec().clusterIPs()).containsExactly("10.96.0.10", "fd00:96::10");
        assertThat(api.spec().externalIPs()).containsExactly("192.0.2.10");
        assertThat(api.spec().loadBalancerIngressIPs()).containsExactly("198.51.100.10");
        assertThat(api.spec().ports()).containsExactly(
                new KubernetesServiceSpec.ServicePort("http", "TCP", 80, 30080),
                new KubernetesServiceSpec.ServicePort("dns", "UDP", 53, 0));
        KubernetesService headless = (KubernetesService) store.get(
                ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "headless")).orElseThrow();
        assertThat(headless.spec().clusterIPs()).isEmpty(); // "None" is no address
        assertThat(headless.spec().ports()).containsExactly(new KubernetesServiceSpec.ServicePort("", "TCP", 5432, 0));
        assertThat(store.list(ResourceKind.KUBERNETES_SERVICE).items()).extracting(r -> r.metadata().name())
                .containsExactly("api", "headless");

        assertThatThrownBy(() -> store.create(new KubernetesService(ObjectMeta.namespaced("shop", "x"), api.spec())))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("KubernetesService cannot be written");
        assertThatThrownBy(() -> store.update(api))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("KubernetesService cannot be written");
        assertThatThrownBy(() -> store.delete(api.key(), null))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("change the Service instead");
        assertThat(k8s.services().inNamespace("shop").withName("api").get()).isNotNull();
    }

    @Test
    void serviceChangesArriveThroughAWatch() {
        namespace("shop", Map.of());
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.KUBERNETES_SERVICE, null, store.currentRevision(), rec)) {
            k8s.services().inNamespace("shop").resource(TestServices.service("api", "10.96.0.10", 80)).create();
            KubernetesService added = (KubernetesService) ((WatchEvent.Added) rec.changes(1, WAIT).get(0)).resource();
            assertThat(added.spec().ports()).extracting(KubernetesServiceSpec.ServicePort::port).containsExactly(80, 53);

            k8s.services().inNamespace("shop").withName("api").edit(s -> new ServiceBuilder(s).editSpec()
                    .editFirstPort().withPort(8080).endPort().endSpec().build());
            WatchEvent.Modified moved = (WatchEvent.Modified) rec.changes(1, WAIT).get(0);
            assertThat(((KubernetesService) moved.resource()).spec().ports())
                    .extracting(KubernetesServiceSpec.ServicePort::port).containsExactly(8080, 53);
            assertThat(moved.previous()).isEqualTo(added);

            k8s.services().inNamespace("shop").withName("api").delete();
            WatchEvent.Deleted gone = (WatchEvent.Deleted) rec.changes(1, WAIT).get(0);
            assertThat(gone.key()).isEqualTo(ResourceKey.of(ResourceKind.KUBERNETES_SERVICE, "shop", "api"));
        }
    }

    /**
     * EndpointSlices are presented read-only as KubernetesEndpointSlice (their service from the
     * {@code kubernetes.io/service-name} label, every endpoint's addresses whatever its conditions,
     * the ports), and their changes arrive through a watch.
     */
    @Test
    void endpointSlicesArePresentedReadOnlyAndWatched() {
        namespace("shop", Map.of());
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.KUBERNETES_ENDPOINT_SLICE, null, store.currentRevision(), rec)) {
            k8s.discovery().v1().endpointSlices().inNamespace("shop")
                    .resource(TestServices.endpointSlice("api-1", "api", 8080, "10.70.0.2", "10.70.0.3")).create();
            KubernetesEndpointSlice added = (KubernetesEndpointSlice) ((WatchEvent.Added) rec.changes(1, WAIT).get(0))
                    .resource();
            assertThat(added.spec().serviceName()).isEqualTo("api");
            assertThat(added.spec().endpoints()).extracting(KubernetesEndpointSliceSpec.Endpoint::addresses)
                    .containsExactly(List.of("10.70.0.2"), List.of("10.70.0.3"));
            assertThat(added.spec().ports()).containsExactly(
                    new KubernetesEndpointSliceSpec.EndpointPort("http", "TCP", 8080),
                    new KubernetesEndpointSliceSpec.EndpointPort("", "UDP", 53));
            assertThat(store.get(added.key())).contains(added);
            assertThat(store.list(ResourceKind.KUBERNETES_ENDPOINT_SLICE).items()).containsExactly(added);

            k8s.discovery().v1().endpointSlices().inNamespace("shop")
                    .resource(TestServices.endpointSlice("api-1", "api", 8080, "10.70.0.4")).update();
            KubernetesEndpointSlice moved = (KubernetesEndpointSlice) ((WatchEvent.Modified) rec.changes(1, WAIT).get(0))
                    .resource();
            assertThat(moved.spec().endpoints()).extracting(KubernetesEndpointSliceSpec.Endpoint::addresses)
                    .containsExactly(List.of("10.70.0.4"));

            assertThatThrownBy(() -> store.create(new KubernetesEndpointSlice(ObjectMeta.namespaced("shop", "x"),
                    moved.spec()))).isInstanceOf(DatastoreException.Invalid.class)
                    .hasMessageContaining("KubernetesEndpointSlice cannot be written");
            assertThatThrownBy(() -> store.delete(moved.key(), null))
                    .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("change the EndpointSlice");

            k8s.discovery().v1().endpointSlices().inNamespace("shop").withName("api-1").delete();
            WatchEvent.Deleted gone = (WatchEvent.Deleted) rec.changes(1, WAIT).get(0);
            assertThat(gone.key()).isEqualTo(ResourceKey.of(ResourceKind.KUBERNETES_ENDPOINT_SLICE, "shop", "api-1"));
        }
    }

    // ------------------------------------------------------------------ watches of presented kinds

    @Test
    void podChangesArriveAsEndpointChanges() {
        namespace("prod", Map.of());
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.WORKLOAD_ENDPOINT, null, store.currentRevision(), rec)) {
            Pod created = k8s.pods().inNamespace("prod").resource(pod("web-1", "node-1", "10.0.0.5", Map.of())).create();
            WatchEvent added = rec.changes(1, WAIT).get(0);
            assertThat(added).isInstanceOf(WatchEvent.Added.class);
            WorkloadEndpoint wep = (WorkloadEndpoint) ((WatchEvent.Added) added).resource();
            assertThat(wep.metadata().name()).isEqualTo("node--1-k8s-web--1-eth0");
            assertThat(added.revision()).isEqualTo(Long.parseLong(created.getMetadata().getResourceVersion()));

            k8s.pods().inNamespace("prod").withName("web-1").edit(p -> new PodBuilder(p)
                    .editMetadata().addToLabels("app", "web").endMetadata().build());
            WatchEvent.Modified relabelled = (WatchEvent.Modified) rec.changes(1, WAIT).get(0);
            assertThat(relabelled.resource().metadata().labels()).containsEntry("app", "web");
            assertThat(relabelled.previous()).isEqualTo(wep);

            // A finished pod no longer owns its IP: its endpoint goes.
            k8s.pods().inNamespace("prod").withName("web-1").edit(p -> new PodBuilder(p)
                    .editStatus().withPhase("Succeeded").endStatus().build());
            WatchEvent.Deleted finished = (WatchEvent.Deleted) rec.changes(1, WAIT).get(0);
            assertThat(finished.key()).isEqualTo(wep.key());
            assertThat(finished.previous()).isEqualTo(relabelled.resource());
        }
    }

    @Test
    void aProfileWatchFollowsNamespacesAndServiceAccounts() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.PROFILE, null, store.currentRevision(), rec)) {
            namespace("prod", Map.of("team", "a"));
            k8s.serviceAccounts().inNamespace("prod").resource(new ServiceAccountBuilder().withNewMetadata()
                    .withName("api").endMetadata().build()).create();
            k8s.namespaces().withName("prod").delete();

            List<WatchEvent> events = rec.changes(3, WAIT);
            assertThat(events).extracting(e -> e.getClass().getSimpleName() + " " + key(e).name())
                    .containsExactlyInAnyOrder("Added kns.prod", "Added ksa.prod.api", "Deleted kns.prod");
            assertThat(rec.overlaps()).isZero();
        }
    }

    @Test
    void aMultiSourceWatchWhoseRevisionExpiresEndsWithCompactedSoThatTheCallerListsAgain() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.PROFILE, null, store.currentRevision(), rec)) {
            rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);
            // A profile watch has two sources (namespaces, service accounts); one bookmark does not
            // prove both are open, and a source opening during the partition would replay "missed".
            awaitOpenWatches(2);
            server.partition(true);
            namespace("missed", Map.of());
            server.compact();
            server.partition(false);
            server.dropWatches(); // fabric8 resumes from its last revision, which is now compacted

            WatchEvent end = rec.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);

            assertThat(end).isInstanceOf(WatchEvent.Compacted.class);
            namespace("after", Map.of());
            assertThat(rec.drain()).noneMatch(e -> !(e instanceof WatchEvent.Bookmark) && !(e instanceof WatchEvent.Compacted));
        }
    }

    private void awaitOpenWatches(int n) {
        Await.until(n + " watches open on the mock server", WAIT, () -> server.openWatches() >= n);
    }

    private static ResourceKey key(WatchEvent e) {
        if (e instanceof WatchEvent.Added a) {
            return a.resource().key();
        }
        if (e instanceof WatchEvent.Modified m) {
            return m.resource().key();
        }
        return ((WatchEvent.Deleted) e).key();
    }

    private void namespace(String name, Map<String, String> labels) {
        k8s.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).withLabels(labels)
                .endMetadata().build()).create();
    }

    static Pod pod(String name, String node, String ip, Map<String, String> labels) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withLabels(labels)
                .withUid(java.util.UUID.randomUUID().toString()).endMetadata()
                .withNewSpec().withNodeName(node).withServiceAccountName("api")
                .addNewContainer().withName("c").withImage("busybox").endContainer().endSpec();
        if (ip != null) {
            b.withNewStatus().withPodIP(ip).withPhase("Running").endStatus();
        }
        return b.build();
    }
}
