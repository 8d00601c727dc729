package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchEvent;
import calico.libcalico.datastore.WatchRecorder;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The API server's own BOOKMARK events (watch cache on, as every cluster runs it). A watch of
 * one namespace that sees no change still moves forward: the server bookmarks the revision its
 * cache reached (busy elsewhere), the watch's {@code Bookmark} reports it, and fabric8 resumes
 * the stream from it when the stream ends ({@code timeoutSeconds}: the server bookmarks 2 s
 * before; without a timeout it bookmarks about once a minute).
 */
class BookmarksRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern RESUMED_AT = Pattern.compile("resourceVersion=(\\d+)");

    @Test
    void aQuietWatchMovesForwardWithTheServersBookmarksAndResumesFromThem() {
        KubernetesClient k8s = KUBE.client();
        for (String ns : new String[] {"quiet", "busy"}) {
            k8s.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        }
        RequestLog log = new RequestLog();
        try (KubernetesClient client = log.client(KUBE.config());
             KubernetesDatastore store = new KubernetesDatastore(KubernetesConfig.of(KUBE.config())
                     .withBookmarkInterval(Duration.ofMillis(200)).withWatchTimeout(Duration.ofSeconds(4)), client)) {
            WatchRecorder rec = new WatchRecorder();
            try (Watch w = store.watch(ResourceKind.KUBERNETES_SERVICE, "quiet", 0, rec)) {
                long start = ((WatchEvent.Bookmark) rec.next(e -> e instanceof WatchEvent.Bookmark, WAIT)).revision();
                long busy = 0;
                for (int i = 0; i < 3; i++) {
                    busy = revision(k8s.services().inNamespace("busy").resource(service("s" + i)).create());
                }
                long elsewhere = busy;

                WatchEvent moved = rec.next(e -> !(e instanceof WatchEvent.Bookmark b) || b.revision() >= elsewhere, WAIT);

                assertThat(moved).as("no change in the quiet namespace, only progress")
                        .isInstanceOf(WatchEvent.Bookmark.class);
                assertThat(moved.revision()).isGreaterThan(start);
                // fabric8 resumed (or will resume) the ended stream from the server's bookmark, not from the start.
                awaitResumeFrom(log, elsewhere);

                Service mine = k8s.services().inNamespace("quiet").resource(service("mine")).create();
                WatchEvent added = rec.next(e -> !(e instanceof WatchEvent.Bookmark), WAIT);
                assertThat(added).isInstanceOf(WatchEvent.Added.class);
                assertThat(added.revision()).isEqualTo(revision(mine));
            }
        }
    }

    private static void awaitResumeFrom(RequestLog log, long atLeast) {
        Await.until("a watch resumed from " + atLeast, WAIT, () -> log.matching("/namespaces/quiet/services?", "watch=true")
                .stream().anyMatch(r -> resumedAt(r) >= atLeast));
    }

    private static long resumedAt(String request) {
        Matcher m = RESUMED_AT.matcher(request);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static Service service(String name) {
        return new ServiceBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .addNewPort().withName("http").withProtocol("TCP").withPort(80).endPort().endSpec().build();
    }

    private static long revision(Service s) {
        return Long.parseLong(s.getMetadata().getResourceVersion());
    }
}
