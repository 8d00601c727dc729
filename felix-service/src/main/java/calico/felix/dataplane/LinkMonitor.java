package calico.felix.dataplane;

import calico.dataplane.netlink.Errno;
import calico.dataplane.netlink.LinkUpdate;
import calico.dataplane.netlink.LinkWatcher;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.NetlinkException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the programmed namespace's links on a thread of its own (named
 * {@code felix-links[-<netns>]}) that first enters that namespace, so the {@link LinkWatcher}
 * socket listens there. Announcements are handed to {@code sink} as they arrive, in kernel
 * order; the sink (the kernel dataplane) moves them onto its own thread.
 *
 * <p>Never throws after construction: a lost-announcement overflow ({@code ENOBUFS}) calls
 * {@code lost} (the owner re-reads the links), other errors go to {@code failed} and the loop
 * retries after a pause. {@link #close()} stops the loop within one read timeout.
 */
final class LinkMonitor implements AutoCloseable {

    /** The owner's callbacks; each is called on the monitor's thread. */
    interface Listener {
        void updates(List<LinkUpdate> updates);

        void lost();

        void failed(String error);
    }

    private static final Logger log = LoggerFactory.getLogger(LinkMonitor.class);
    private static final Duration READ_TIMEOUT = Duration.ofMillis(200);
    private static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

    private final Thread thread;
    private final CountDownLatch opened = new CountDownLatch(1);
    private volatile boolean running = true;

    /** Starts watching; returns once the socket is subscribed (or opening it failed, which is reported). */
    LinkMonitor(String netns, Listener listener) {
        thread = new Thread(() -> run(netns, listener), netns.isEmpty() ? "felix-links" : "felix-links-" + netns);
        thread.setDaemon(true);
        thread.start();
        try {
            // Subscribed before the first apply, so no link that appears afterwards is missed.
            opened.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run(String netns, Listener listener) {
        LinkWatcher watcher = null;
        try {
            while (running) {
                try {
                    if (watcher == null) {
                        if (!netns.isEmpty()) {
                            NetNamespace.enterNamed(netns); // harmless when repeated
                        }
                        watcher = LinkWatcher.open();
                        opened.countDown();
                    }
                    List<LinkUpdate> updates = watcher.read(READ_TIMEOUT);
                    if (!updates.isEmpty()) {
                        listener.updates(updates);
                    }
                } catch (NetlinkException e) {
                    if (e.errno() == Errno.ENOBUFS) {
                        log.warn("Link announcements were lost; re-reading the links");
                        listener.lost();
                        continue;
                    }
                    fail(listener, "link watcher: " + e.getMessage());
                    watcher = reopen(watcher);
                } catch (RuntimeException e) {
                    fail(listener, "link watcher: " + e);
                    watcher = reopen(watcher);
                }
            }
        } finally {
            opened.countDown();
            if (watcher != null) {
                watcher.close();
            }
        }
    }

    private void fail(Listener listener, String error) {
        opened.countDown();
        listener.failed(error);
        try {
            Thread.sleep(RETRY_PAUSE.toMillis());
        } catch (InterruptedException e) {
            running = false;
        }
    }

    private static LinkWatcher reopen(LinkWatcher watcher) {
        if (watcher != null) {
            watcher.close();
        }
        return null;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(READ_TIMEOUT.toMillis() * 5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
