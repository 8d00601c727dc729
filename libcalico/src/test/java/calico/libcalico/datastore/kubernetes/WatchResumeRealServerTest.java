package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.KubeControlPlaneExtension;
import calico.libcalico.testing.TcpProxy;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Watches on the real kube-apiserver, reached through a {@link TcpProxy} so that a test can
 * break their streams while the server runs: fabric8 resumes a broken stream from its last
 * revision, which loses nothing, and a resume (or a start) from a revision etcd compacted meanwhile gets
 * 410 Gone and ends the watch with {@code Compacted}. The watch cache is off, so that a
 * compaction reaches watches at once (with it, old revisions are served from the cache).
 */
class WatchResumeRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers()
            .withApiServerFlags("--watch-cache=false");

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final AtomicInteger TESTS = new AtomicInteger();

    private TcpProxy proxy;
    private KubernetesDatastore store;
    private String prefix;

    @BeforeEach
    void throughAProxy() {
        var url = KUBE.controlPlane().apiServerUrl();
        proxy = new TcpProxy(new InetSocketAddress(url.getHost(), url.getPort()));
        store = new KubernetesDatastore(KubernetesConfig.of(new ConfigBuilder(KUBE.config())
                .withMasterUrl("https://127.0.0.1:" + proxy.port()).build())
                .withBookmarkInterval(Duration.ofMillis(200)));
        prefix = "t" + TESTS.incrementAndGet() + "-";
    }

    @AfterEach
    void close() {
        store.close();
        proxy.close();
    }

    @Test
    void aWatchFromACompactedRevisionEndsWithCompactedAtTheServersCompactionPoint() {
        long start = store.currentRevision();
        node("a");
        node("b");
        long compactedAt = KUBE.controlPlane().compactEtcd();

        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.NODE, null, start, rec)) {
            WatchEvent e = rec.next(x -> !(x instanceof WatchEvent.Bookmark), WAIT);

            assertThat(e).isInstanceOf(WatchEvent.Compacted.class);
            assertThat(((WatchEvent.Compacted) e).compactRevision()).isGreaterThan(start).isLessThanOrEqualTo(compactedAt);
            node("c");
            assertThat(rec.poll(Duration.ofMillis(500))).isNull();
        }
    }

    /** The stream breaks; while it is down nodes change; the resumed stream delivers each change once, in order. */
    @Test
    void aBrokenStreamResumesFromItsLastRevisionAndLosesNothing() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.NODE, null, 0, rec)) {
            rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);
            Node a = node("a");
            assertThat(rec.changes(1, WAIT)).extracting(WatchEvent::revision).containsExactly(revision(a));

            Node[] written = new Node[2];
            proxy.cutAndHoldWhile(() -> {
                written[0] = node("b");
                written[1] = KUBE.client().nodes().withName(a.getMetadata().getName())
                        .edit(n -> new NodeBuilder(n).editMetadata().addToLabels("changed", "yes").endMetadata().build());
                KUBE.client().nodes().withName(written[0].getMetadata().getName()).delete();
            });
            Node b = written[0];
            Node a2 = written[1];

            List<WatchEvent> resumed = rec.changes(3, WAIT);
            assertThat(resumed.get(0)).isInstanceOf(WatchEvent.Added.class);
            assertThat(resumed.get(0).revision()).isEqualTo(revision(b));
            assertThat(resumed.get(1)).isInstanceOf(WatchEvent.Modified.class);
            assertThat(((WatchEvent.Modified) resumed.get(1)).resource().metadata().labels()).containsEntry("changed", "yes");
            assertThat(resumed.get(1).revision()).isEqualTo(revision(a2));
            assertThat(resumed.get(2)).isInstanceOf(WatchEvent.Deleted.class);
            assertThat(((WatchEvent.Deleted) resumed.get(2)).key()).isEqualTo(key(b));
            assertThat(rec.poll(Duration.ofMillis(300))).matches(e -> e == null || e instanceof WatchEvent.Bookmark);
        }
    }

    /**
     * Issue 29, "reconnect at once", for a direct (non-typha) watch: the server is unreachable
     * (every connection refused) until the client has tried {@link #REFUSED_CONNECTIONS} times, past
     * the point where its resume schedule reaches its cap; a node is written meanwhile. The client
     * must never wait 2 s or more between two tries (fabric8's default schedule, 100 ms doubling to
     * 3.2 s inside each attempt and then 1 s doubling to 32 s between attempts, does), and once the
     * server is reachable again the resumed stream must deliver the node within the safety bound.
     * The figures are printed (libcalico design/syncer.md).
     */
    @Test
    void aCutWatchRetriesWithinTwoSecondsAndDeliversSoonAfterTheServerIsBack() {
        WatchRecorder rec = new WatchRecorder();
        try (Watch w = store.watch(ResourceKind.NODE, null, 0, rec)) {
            rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);
            node("before");
            rec.changes(1, WAIT);
            long cut = System.nanoTime();
            Node[] during = new Node[1];
            long reachable = proxy.cutAndRefuseWhile(() -> {
                during[0] = node("during");
                calico.libcalico.testing.Await.until(REFUSED_CONNECTIONS + " connections refused",
                        Duration.ofMinutes(2), () -> proxy.refused() >= REFUSED_CONNECTIONS);
            });
            WatchEvent back = rec.next(e -> !(e instanceof WatchEvent.Bookmark), RECONNECT_SAFETY_BOUND);
            long delivered = System.nanoTime();
            System.out.printf("[direct watch reconnect] outage %d ms (%d connections refused, longest wait between two"
                    + " %d ms); reachable -> event %d ms%n", (reachable - cut) / 1_000_000, proxy.refused(),
                    proxy.longestGapBetweenRefusals().toMillis(), (delivered - reachable) / 1_000_000);
            assertThat(back).isInstanceOf(WatchEvent.Added.class);
            assertThat(back.revision()).isEqualTo(revision(during[0]));
            assertThat(proxy.longestGapBetweenRefusals()).as("the client's longest wait between two tries")
                    .isLessThan(Duration.ofSeconds(2));
        }
    }

    /**
     * Enough refused connections for the resume schedule to reach its cap: the JDK HTTP client
     * opens two connections per try (it retries a GET once), and the schedule doubles 5 times.
     */
    private static final int REFUSED_CONNECTIONS = 16;
    /** Generous against the 2 s goal (a loaded CI machine); the cut stream is back in about 1.2 s. */
    private static final Duration RECONNECT_SAFETY_BOUND = Duration.ofSeconds(10);

    /** As above, but etcd is compacted before the stream resumes: its revision is gone, so the watch ends. */
    @Test
    void aBrokenStreamWhoseRevisionWasCompactedMeanwhileEndsWithCompacted() {
        for (ResourceKind kind : List.of(ResourceKind.NODE, ResourceKind.PROFILE)) { // one source; two
            WatchRecorder rec = new WatchRecorder();
            long before = store.currentRevision();
            try (Watch w = store.watch(kind, null, 0, rec)) {
                rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT);
                Node a = node("a-" + kind.plural());
                if (kind == ResourceKind.NODE) {
                    before = rec.changes(1, WAIT).get(0).revision();
                }

                long[] compactedAt = new long[1];
                proxy.cutAndHoldWhile(() -> {
                    KUBE.client().nodes().withName(a.getMetadata().getName()).delete();
                    namespace("ns-" + kind.plural());
                    compactedAt[0] = KUBE.controlPlane().compactEtcd();
                });

                WatchEvent end = rec.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);
                assertThat(end).as(kind.kind()).isInstanceOf(WatchEvent.Compacted.class);
                // Past the last revision the watch delivered (or its start), at most the compaction.
                assertThat(((WatchEvent.Compacted) end).compactRevision()).isGreaterThan(before)
                        .isLessThanOrEqualTo(compactedAt[0]);
                assertThat(rec.poll(Duration.ofMillis(300))).isNull();
            }
        }
    }

    private Node node(String name) {
        return KUBE.client().nodes().resource(new NodeBuilder().withNewMetadata().withName(prefix + name)
                .endMetadata().build()).create();
    }

    private void namespace(String name) {
        KubernetesClient k8s = KUBE.client();
        k8s.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
                .withName(prefix + name).endMetadata().build()).create();
    }

    private static ResourceKey key(Node n) {
        return ResourceKey.of(ResourceKind.NODE, n.getMetadata().getName());
    }

    private static long revision(Node n) {
        return Long.parseLong(n.getMetadata().getResourceVersion());
    }
}
