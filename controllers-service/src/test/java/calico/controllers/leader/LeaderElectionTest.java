package calico.controllers.leader;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import calico.libcalico.testing.TcpProxy;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link LeaderElection} on a real API server: never two leaders, even when a renewal hangs. */
class LeaderElectionTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers();

    private static LeaderElection.Settings settings(String identity) {
        return new LeaderElection.Settings("election-test", "default", identity, Duration.ofSeconds(4),
                Duration.ofSeconds(2), Duration.ofMillis(500));
    }

    /**
     * A leader whose renewal is held open by a dead connection (requests time out only after 30 s, far past the
     * lease) stops on its own clock, before the standby can take the Lease: fabric8's elector alone would check
     * its deadline only once the held request failed.
     */
    @Test
    void aLeaderWhoseRenewalHangsStopsBeforeTheStandbyLeads() {
        URI api = KUBE.controlPlane().apiServerUrl();
        List<String> events = new CopyOnWriteArrayList<>();
        try (TcpProxy proxy = new TcpProxy(new InetSocketAddress(api.getHost(), api.getPort()));
             KubernetesClient cutOff = new KubernetesClientBuilder().withConfig(new ConfigBuilder(KUBE.config())
                     .withMasterUrl("https://" + api.getHost() + ":" + proxy.port())
                     .withRequestTimeout(30_000).withRequestRetryBackoffLimit(0).build()).build();
             LeaderElection a = new LeaderElection(cutOff, settings("a"), () -> events.add("a leads"),
                     () -> events.add("a stops"))) {
            a.start();
            Await.until("a leads", Duration.ofSeconds(60), () -> events.contains("a leads"));
            try (LeaderElection b = new LeaderElection(KUBE.client(), settings("b"), () -> events.add("b leads"),
                    () -> events.add("b stops"))) {
                b.start();
                proxy.hold(true);
                proxy.cut(); // a's renewals now hang: neither renewed nor refused
                Await.until("b leads", Duration.ofSeconds(60), () -> events.contains("b leads"));
                assertThat(events).as("a stopped before b led").containsSubsequence("a leads", "a stops", "b leads");
                proxy.hold(false);
            }
        }
    }
}
