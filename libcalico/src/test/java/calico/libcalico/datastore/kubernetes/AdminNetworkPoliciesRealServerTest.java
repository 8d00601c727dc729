package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * AdminNetworkPolicy and BaselineAdminNetworkPolicy on a real kube-apiserver with the chart's
 * CRDs: the kubernetes datastore lists and watches them as GlobalNetworkPolicies
 * ({@code kanp.adminnetworkpolicy.*}, {@code kbanp.baselineadminnetworkpolicy.*}) beside Calico's
 * own, refuses writes to them, and the CRDs refuse what the upstream API refuses.
 */
class AdminNetworkPoliciesRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final String ANP = """
            apiVersion: policy.networking.k8s.io/v1alpha1
            kind: AdminNetworkPolicy
            metadata: {name: cluster-control}
            spec:
              priority: %d
              subject: {namespaces: {matchLabels: {tenant: blue}}}
              ingress:
              - name: from-monitoring
                action: Allow
                from: [{namespaces: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
              egress:
              - name: no-metadata-server
                action: Deny
                to: [{networks: [169.254.169.254/32]}]
                ports: [{portNumber: {protocol: TCP, port: 80}}]
            """;

    private static final String BANP = """
            apiVersion: policy.networking.k8s.io/v1alpha1
            kind: BaselineAdminNetworkPolicy
            metadata: {name: default}
            spec:
              subject: {namespaces: {}}
              ingress:
              - {name: default-deny, action: Deny, from: [{namespaces: {}}]}
            """;

    @Test
    void listedAndWatchedAsGlobalNetworkPoliciesAndReadOnly() {
        Datastore store = KUBE.datastore();
        long from = store.currentRevision();
        WatchRecorder events = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_POLICY, null, from, events)) {
            KUBE.controlPlane().kubectlWithInput(ANP.formatted(20), "apply", "-f", "-");
            KUBE.controlPlane().kubectlWithInput(BANP, "apply", "-f", "-");

            WatchEvent added = events.next(e -> e instanceof WatchEvent.Added, Duration.ofSeconds(20));
            GlobalNetworkPolicy anp = (GlobalNetworkPolicy) ((WatchEvent.Added) added).resource();
            assertThat(anp.metadata().name()).isEqualTo("kanp.adminnetworkpolicy.cluster-control");
            assertThat(anp.spec().tier()).isEqualTo("kube-admin");
            assertThat(anp.spec().order()).isEqualTo(20.0);
            assertThat(anp.spec().namespaceSelector()).isEqualTo("tenant == 'blue'");
            assertThat(anp.spec().egress().get(0).destination().nets()).containsExactly("169.254.169.254/32");
            assertThat(anp.spec().egress().get(0).metadata().annotations()).containsEntry("name", "no-metadata-server");
            WatchEvent baseline = events.next(e -> e instanceof WatchEvent.Added, Duration.ofSeconds(20));
            assertThat(((WatchEvent.Added) baseline).resource().metadata().name())
                    .isEqualTo("kbanp.baselineadminnetworkpolicy.default");

            KUBE.controlPlane().kubectlWithInput(ANP.formatted(30), "apply", "-f", "-");
            WatchEvent modified = events.next(e -> e instanceof WatchEvent.Modified, Duration.ofSeconds(20));
            assertThat(((GlobalNetworkPolicy) ((WatchEvent.Modified) modified).resource()).spec().order()).isEqualTo(30.0);

            assertThat(store.list(ResourceKind.GLOBAL_NETWORK_POLICY).items()).extracting(r -> r.metadata().name())
                    .contains("kanp.adminnetworkpolicy.cluster-control", "kbanp.baselineadminnetworkpolicy.default");
            ResourceKey key = ResourceKey.of(ResourceKind.GLOBAL_NETWORK_POLICY, "kanp.adminnetworkpolicy.cluster-control");
            assertThat(store.get(key)).hasValueSatisfying(r -> assertThat(r.metadata().name()).isEqualTo(key.name()));
            assertThatThrownBy(() -> store.delete(key, null)).isInstanceOf(DatastoreException.Invalid.class)
                    .hasMessageContaining("read-only").hasMessageContaining("AdminNetworkPolicy");

            KUBE.kubectl("delete", "adminnetworkpolicy", "cluster-control");
            WatchEvent deleted = events.next(e -> e instanceof WatchEvent.Deleted, Duration.ofSeconds(20));
            assertThat(((WatchEvent.Deleted) deleted).key()).isEqualTo(key);
        } finally {
            KUBE.kubectl("delete", "baselineadminnetworkpolicy", "default", "--ignore-not-found");
        }
    }

    @Test
    void theCrdsRefuseWhatTheUpstreamApiRefuses() {
        assertThatThrownBy(() -> KUBE.controlPlane().kubectlWithInput(ANP.formatted(1001), "apply", "-f", "-"))
                .hasMessageContaining("spec.priority").hasMessageContaining("1000");
        assertThatThrownBy(() -> KUBE.controlPlane().kubectlWithInput(BANP.replace("name: default}", "name: other}"),
                "apply", "-f", "-"))
                .hasMessageContaining("Only one baseline admin network policy");
        assertThatThrownBy(() -> KUBE.controlPlane().kubectlWithInput(ANP.formatted(5).replace("action: Deny", "action: Log"),
                "apply", "-f", "-"))
                .hasMessageContaining("spec.egress[0].action").hasMessageContaining("Unsupported value");
    }

    @Test
    void aCalicoGlobalNetworkPolicyCannotTakeAnAdminPolicysName() {
        Datastore store = KUBE.datastore();
        assertThatThrownBy(() -> store.create(new GlobalNetworkPolicy(ObjectMeta.named("kbanp.baselineadminnetworkpolicy.default"),
                new calico.api.model.GlobalNetworkPolicySpec("kube-baseline", 1.0, java.util.List.of(calico.api.model.Rule.deny()),
                        null, "all()", null, null, null, null, null, null, null))))
                .isInstanceOf(DatastoreException.Invalid.class).hasMessageContaining("metadata.name");
    }
}
