package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.controlplane.ControlPlane;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A watch from the revision of a list just made delivers every later change, also when the API
 * server's watch cache of one of the kind's sources started after that list. kube-apiserver makes
 * a custom resource's cache at the resource's first request, and again after its CRD's spec
 * changes; a list while the cache is not ready is read from etcd, and the new cache then refuses
 * older revisions ({@code too old resource version: R (C)}). Seen as a CI flake: {@code kubectl
 * get -w} on GlobalNetworkPolicies (Calico's CRD, AdminNetworkPolicies, BaselineAdminNetworkPolicies,
 * the last two first requested by that very list) got {@code Expired} right after its list. Here
 * a CRD change makes that order certain, with changes between the list and the cache's start.
 */
class ListThenWatchRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern TOO_OLD = Pattern.compile("too old resource version: \\d+ \\((\\d+)\\)");
    private static final String ANP = """
            apiVersion: policy.networking.k8s.io/v1alpha1
            kind: AdminNetworkPolicy
            metadata: {name: %s}
            spec:
              priority: %d
              subject: {namespaces: {}}
              ingress: [{name: deny-all, action: Deny, from: [{namespaces: {}}]}]
            """;

    @Test
    void aWatchFromAListsRevisionDeliversChangesMadeBeforeASourcesWatchCacheStarted() {
        ControlPlane cp = KUBE.controlPlane();
        try (Datastore store = KUBE.datastore()) {
            cp.kubectlWithInput(ANP.formatted("deleted-in-between", 6), "apply", "-f", "-");
            long listed = store.list(ResourceKind.GLOBAL_NETWORK_POLICY, null, null).revision();
            cp.kubectlWithInput(ANP.formatted("made-in-between", 7), "apply", "-f", "-");
            cp.kubectl("delete", "adminnetworkpolicy", "deleted-in-between");

            // A spec change makes kube-apiserver drop the AdminNetworkPolicy storage; its next
            // request makes a new watch cache, which starts after the change (and the two above).
            cp.kubectl("patch", "crd", "adminnetworkpolicies.policy.networking.k8s.io", "--type=json", "-p",
                    "[{\"op\":\"add\",\"path\":\"/spec/versions/0/schema/openAPIV3Schema/description\","
                            + "\"value\":\"changed by ListThenWatchRealServerTest\"}]");
            long changed = Long.parseLong(cp.kubectl("get", "crd", "adminnetworkpolicies.policy.networking.k8s.io",
                    "-o", "jsonpath={.metadata.resourceVersion}").strip());
            Await.until("a new AdminNetworkPolicy watch cache, started after revision " + changed, WAIT,
                    () -> cacheStart(cp, listed) >= changed);

            WatchRecorder events = new WatchRecorder();
            try (Watch w = store.watch(ResourceKind.GLOBAL_NETWORK_POLICY, null, listed, events)) {
                List<WatchEvent> between = events.changes(2, WAIT);
                assertThat(between).as("the changes after revision %d", listed).hasSize(2);
                assertThat(between.get(0)).isInstanceOf(WatchEvent.Added.class);
                assertThat(((WatchEvent.Added) between.get(0)).resource().metadata().name())
                        .isEqualTo("kanp.adminnetworkpolicy.made-in-between");
                assertThat(between.get(1)).isInstanceOf(WatchEvent.Deleted.class);
                assertThat(((WatchEvent.Deleted) between.get(1)).key()).isEqualTo(
                        new ResourceKey(ResourceKind.GLOBAL_NETWORK_POLICY, null, "kanp.adminnetworkpolicy.deleted-in-between"));

                cp.kubectl("delete", "adminnetworkpolicy", "made-in-between");
                WatchEvent deleted = events.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);
                assertThat(deleted).as("then the stream, from where the cache starts").isInstanceOf(WatchEvent.Deleted.class);
                assertThat(((WatchEvent.Deleted) deleted).key().name()).isEqualTo("kanp.adminnetworkpolicy.made-in-between");
            }
        }
    }

    /** {@return C of the refusal of a plain AdminNetworkPolicy watch from {@code revision}}, or -1 when it is served */
    private static long cacheStart(ControlPlane cp, long revision) {
        // The watch cache's refusal is an ERROR event in a 200 stream: kubectl prints it and exits 0.
        ControlPlane.KubectlResult r = cp.kubectlAs(cp.adminKubeconfig(), "get", "--raw",
                "/apis/policy.networking.k8s.io/v1alpha1/adminnetworkpolicies?watch=1&timeoutSeconds=1&resourceVersion="
                        + revision);
        Matcher m = TOO_OLD.matcher(r.output());
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
