package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction as the datastore's resync tests need it: a watch from before it gets 410 Gone. */
class CompactionTest {

    @TempDir
    static Path dir;

    static ControlPlane cp;

    @BeforeAll
    static void start() {
        // Without the watch cache every watch reads etcd, so a compaction shows at once.
        cp = ControlPlane.start(Settings.in(dir).withControllerManager(false).withScheduler(false)
                .withApiServerFlags("--watch-cache=false"));
    }

    @AfterAll
    static void stop() {
        if (cp != null) {
            cp.close();
        }
    }

    @Test
    void aWatchFromACompactedRevisionIsGone() {
        String before = cp.kubectl("create", "configmap", "old", "-n", "default", "-o", "jsonpath={.metadata.resourceVersion}");
        // etcd keeps the compaction revision itself: two more writes put before + 1 behind it.
        cp.kubectl("create", "configmap", "new", "-n", "default");
        cp.kubectl("create", "configmap", "newer", "-n", "default");
        long compacted = cp.compactEtcd();
        assertThat(compacted).isGreaterThan(Long.parseLong(before) + 1);
        String watch = cp.kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=5&resourceVersion=" + before);
        assertThat(watch).contains("\"type\":\"ERROR\"").contains("\"code\":410");
    }
}
