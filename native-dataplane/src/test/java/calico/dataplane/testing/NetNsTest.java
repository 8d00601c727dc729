package calico.dataplane.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NetNsTest {

    @Test
    void codeRunsInsideTheNamespaceAndTheNamespaceIsDeleted() throws Exception {
        String name;
        try (NetNs a = NetNs.create("calico-t"); NetNs b = NetNs.create("calico-t")) {
            name = a.name();
            a.veth("veth-a", b, "veth-b");
            // /sys/class/net reflects the calling thread's namespace only after a remount, so ask
            // the kernel through /proc/self/net/dev, which follows the thread's namespace.
            String inside = a.call(() -> Files.readString(Path.of("/proc/thread-self/net/dev")));
            assertThat(inside).contains("veth-a").doesNotContain("veth-b");
            assertThat(b.exec("ip", "-o", "link", "show")).contains("veth-b");
            assertThat(Files.readString(Path.of("/proc/thread-self/net/dev"))).doesNotContain("veth-a");
        }
        assertThat(Path.of("/run/netns", name)).doesNotExist();
    }
}
