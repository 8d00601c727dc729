package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link LinkWatcher}: decoding of announcements, and the real kernel's announcements in a test namespace. */
class LinkWatcherTest {
    static final String PREFIX = "calico-lwt";

    private NetNs ns;
    private LinkWatcher watcher;

    @AfterEach
    void cleanUp() {
        if (watcher != null) {
            watcher.close();
        }
        if (ns != null) {
            ns.close();
        }
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    @Test
    void decodesNewAndDelLinkAndSkipsOtherMessages() {
        byte[] up = link(LinkWatcher.RTM_NEWLINK, 7, 0x1 | 0x2, "cali1");
        byte[] route = new MessageWriter(24, 0).u32(0).u32(0).u32(0).finish(1); // RTM_NEWROUTE: ignored
        byte[] gone = link(LinkWatcher.RTM_DELLINK, 7, 0x1, "cali1");
        ByteBuffer datagram = ByteBuffer.allocate(up.length + route.length + gone.length + 3)
                .put(up).put(route).put(gone).put(new byte[] {1, 2, 3}).flip(); // plus a malformed tail

        assertThat(LinkWatcher.decode(datagram)).containsExactly(
                new LinkUpdate("cali1", 7, true, false),
                new LinkUpdate("cali1", 7, false, true));
        assertThat(LinkWatcher.decode(ByteBuffer.wrap(link(LinkWatcher.RTM_NEWLINK, 9, 0, "x"))))
                .containsExactly(new LinkUpdate("x", 9, false, false));
    }

    @Test
    void seesAVethCreatedSetUpAndDeleted() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create(PREFIX);
        // Opened inside the namespace: the socket listens there for its whole life.
        watcher = ns.call(LinkWatcher::open);

        ns.exec("ip", "link", "add", "lw0", "type", "veth", "peer", "name", "lw1");
        LinkUpdate created = awaitUpdate(u -> u.name().equals("lw0") && !u.deleted());
        assertThat(created.up()).isFalse();
        assertThat(created.index()).isPositive();

        ns.exec("ip", "link", "set", "lw0", "up");
        LinkUpdate up = awaitUpdate(u -> u.name().equals("lw0") && u.up());
        assertThat(up.index()).isEqualTo(created.index());

        ns.exec("ip", "link", "del", "lw0");
        LinkUpdate deleted = awaitUpdate(u -> u.name().equals("lw0") && u.deleted());
        assertThat(deleted.index()).isEqualTo(created.index());
        // The peer goes with it.
        awaitUpdate(u -> u.name().equals("lw1") && u.deleted());
    }

    @Test
    void readTimesOutEmptyWhenNothingChanges() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create(PREFIX);
        watcher = ns.call(LinkWatcher::open);
        assertThat(watcher.read(Duration.ofMillis(50))).isEmpty();
    }

    private final List<LinkUpdate> seen = new ArrayList<>();

    private LinkUpdate awaitUpdate(Predicate<LinkUpdate> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < deadline) {
            for (LinkUpdate u : watcher.read(Duration.ofMillis(200))) {
                seen.add(u);
                if (wanted.test(u)) {
                    return u;
                }
            }
        }
        throw new AssertionError("no matching link update within 5s; saw " + seen);
    }

    private static byte[] link(int type, int index, int flags, String name) {
        byte[] msg = new MessageWriter(type, 0).u8(0).u8(0).u16(0).u32(index).u32(flags).u32(0)
                .attrString(3, name).finish(1);
        return ByteBuffer.wrap(msg).order(ByteOrder.nativeOrder()).array();
    }
}
