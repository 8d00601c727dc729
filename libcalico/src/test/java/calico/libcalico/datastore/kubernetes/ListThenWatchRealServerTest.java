package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import calico.controlplane.ControlPlane;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A watch from the revision of a list just made delivers every later change, also when the API
 * server's watch cache of one of the kind's sources started after that list (kube-apiserver makes
 * a custom resource's cache at its first request and again after its CRD's spec changes; a list
 * while the cache is not ready is read from etcd, and the new cache then refuses older revisions
 * with {@code too old resource version: R (C)}). Seen as a CI flake: {@code kubectl get -w} on
 * GlobalNetworkPolicies (Calico's CRD, AdminNetworkPolicies, BaselineAdminNetworkPolicies) got
 * {@code Expired} right after its list. The CRD change below makes that order certain.
 */
class ListThenWatchRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void aWatchFromAListsRevisionDeliversChangesMadeBeforeASourcesWatchCacheStarted() {
        try (Datastore store = KUBE.datastore()) {
            long listed = store.list(ResourceKind.GLOBAL_NETWORK_POLICY, null, null).revision();

            // A spec change makes kube-apiserver drop the AdminNetworkPolicy storage; its next
            // request makes a new watch cache, which starts at a revision after `listed`.
            KUBE.kubectl("patch", "crd", "adminnetworkpolicies.policy.networking.k8s.io", "--type=json", "-p",
                    "[{\"op\":\"add\",\"path\":\"/spec/versions/0/schema/openAPIV3Schema/description\","
                            + "\"value\":\"changed by ListThenWatchRealServerTest\"}]");
            KUBE.controlPlane().kubectlWithInput("""
                    apiVersion: policy.networking.k8s.io/v1alpha1
                    kind: AdminNetworkPolicy
                    metadata: {name: after-the-list}
                    spec:
                      priority: 7
                      subject: {namespaces: {}}
                      ingress: [{name: deny-all, action: Deny, from: [{namespaces: {}}]}]
                    """, "apply", "-f", "-");
            Await.until("the new AdminNetworkPolicy watch cache refuses revision " + listed, WAIT,
                    () -> refusedAsTooOld(KUBE.controlPlane(), listed));

            WatchRecorder events = new WatchRecorder();
            try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_POLICY, null, listed, events)) {
                WatchEvent first = events.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);
                assertThat(first).as("the first event after revision %d", listed).isInstanceOf(WatchEvent.Added.class);
                assertThat(((WatchEvent.Added) first).resource().metadata().name())
                        .isEqualTo("kanp.adminnetworkpolicy.after-the-list");

                KUBE.kubectl("delete", "adminnetworkpolicy", "after-the-list");
                WatchEvent deleted = events.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);
                assertThat(deleted).isInstanceOf(WatchEvent.Deleted.class);
            }
        }
    }

    /** Whether a plain watch of AdminNetworkPolicies from {@code revision} is refused as too old. */
    private static boolean refusedAsTooOld(ControlPlane cp, long revision) {
        ControlPlane.KubectlResult r = cp.kubectlAs(cp.adminKubeconfig(), "get", "--raw",
                "/apis/policy.networking.k8s.io/v1alpha1/adminnetworkpolicies?watch=1&timeoutSeconds=1&resourceVersion="
                        + revision);
        return r.exitCode() != 0 && r.output().contains("too old resource version");
    }
}
