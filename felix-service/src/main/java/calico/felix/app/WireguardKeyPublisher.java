package calico.felix.app;

import calico.api.model.Node;
import calico.api.model.NodeStatus;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's WireGuard public keys on its Node, as Calico's felix does:
 * {@code status.wireguardPublicKey} and {@code status.wireguardPublicKeyV6} (on the kubernetes
 * datastore libcalico writes them as the Node's {@code projectcalico.org/WireguardPublicKey} and
 * {@code projectcalico.org/WireguardPublicKeyV6} annotations), each removed when its family's
 * WireGuard is off; a family not told yet leaves the Node's value as it is.
 * Told by the dataplane thread ({@link #accept}, never blocks); writes on a thread of its own, the
 * latest key only, retrying with a growing delay while the datastore fails, the Node does not
 * exist yet, or another writer won the update (the rest of the status is kept). With WireGuard
 * off from the start, a stale key is withdrawn once if the datastore answers, never retried (a
 * felix reading through typha may have no datastore at all).
 */
final class WireguardKeyPublisher implements Consumer<String>, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WireguardKeyPublisher.class);
    static final Duration FIRST_RETRY = Duration.ofMillis(200);
    static final Duration MAX_RETRY = Duration.ofSeconds(30);

    private final String hostname;
    private final Supplier<Datastore> datastores;
    private final java.util.concurrent.ScheduledThreadPoolExecutor thread = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "felix-wireguard-key");
        t.setDaemon(true);
        return t;
    });
    /** Confined to {@link #thread}. */
    private Datastore datastore;
    /** The key to publish, empty for none, null before told (the Node's value is left); written by {@link #accept}. */
    private volatile Optional<String> wanted;
    /** Likewise the IPv6 key ({@link #acceptV6}). */
    private volatile Optional<String> wantedV6;
    private long generation;
    /** Whether this process ever wrote a key: only then is a withdrawal worth retrying. */
    private boolean publishedAny;

    /** @param datastores opens the datastore when the first key is to be written (and after a failure) */
    WireguardKeyPublisher(String hostname, Supplier<Datastore> datastores) {
        this.hostname = Objects.requireNonNull(hostname, "hostname");
        this.datastores = Objects.requireNonNull(datastores, "datastores");
        // Started here, on felix's own thread: started lazily by the first accept, it would be made by the
        // dataplane thread and inherit the node's network namespace, where the datastore (e.g. a
        // kube-apiserver on the host's loopback) may be unreachable; the HTTP client's threads it opens too.
        thread.prestartAllCoreThreads();
    }

    @Override
    public void accept(String publicKey) {
        wanted = Optional.ofNullable(publicKey);
        thread.execute(() -> publish(++generation, FIRST_RETRY));
    }

    /** The IPv6 key ({@code status.wireguardPublicKeyV6}; {@code projectcalico.org/WireguardPublicKeyV6} on KDD). */
    public void acceptV6(String publicKey) {
        wantedV6 = Optional.ofNullable(publicKey);
        thread.execute(() -> publish(++generation, FIRST_RETRY));
    }

    private void publish(long gen, Duration delay) {
        if (gen != generation) {
            return; // a newer key came: its own task publishes it
        }
        Optional<String> key = wanted;
        Optional<String> keyV6 = wantedV6;
        boolean anyKey = key != null && key.isPresent() || keyV6 != null && keyV6.isPresent();
        try {
            if (datastore == null) {
                datastore = datastores.get();
            }
            Optional<Node> node = datastore.get(ResourceKey.of(ResourceKind.NODE, hostname)).map(Node.class::cast);
            if (node.isEmpty()) {
                if (anyKey || publishedAny) {
                    retry(gen, delay, "Node " + hostname + " does not exist yet");
                }
                return; // no Node, no stale key on it
            }
            Node now = node.get();
            NodeStatus status = now.status() == null ? new NodeStatus(null, null, null) : now.status();
            String v4 = key == null ? status.wireguardPublicKey() : key.orElse(null);
            String v6 = keyV6 == null ? status.wireguardPublicKeyV6() : keyV6.orElse(null);
            if (Objects.equals(status.wireguardPublicKey(), v4) && Objects.equals(status.wireguardPublicKeyV6(), v6)) {
                return;
            }
            datastore.update(now.withStatus(new NodeStatus(v4, v6, status.podCIDRs())));
            publishedAny |= anyKey;
            log.info("WireGuard public keys of node {}: IPv4 {}, IPv6 {}", hostname, v4 == null ? "none" : v4,
                    v6 == null ? "none" : v6);
        } catch (DatastoreException.Conflict e) {
            thread.execute(() -> publish(gen, delay)); // read the Node again and redo the change
        } catch (RuntimeException e) {
            closeDatastore();
            if (!anyKey && !publishedAny) {
                // WireGuard off from the start: a stale key is withdrawn when the datastore answers,
                // but a felix without one (through typha) is not kept retrying for it.
                log.info("WireGuard is off; a key left on Node {} was not checked: {}", hostname, e.getMessage());
                return;
            }
            retry(gen, delay, e.toString());
        }
    }

    private void retry(long gen, Duration delay, String why) {
        log.warn("Cannot publish the WireGuard key of node {} yet ({}); retrying in {} ms", hostname, why, delay.toMillis());
        Duration next = delay.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : delay.multipliedBy(2);
        thread.schedule(() -> publish(gen, next), delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void closeDatastore() {
        if (datastore != null) {
            try {
                datastore.close();
            } catch (RuntimeException ignored) {
                // already failing
            }
            datastore = null;
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeDatastore();
    }
}
