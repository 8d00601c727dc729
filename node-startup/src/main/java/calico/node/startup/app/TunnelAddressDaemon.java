package calico.node.startup.app;

import calico.api.model.Node;
import calico.api.model.NodeStatus;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.WatcherSyncer;
import calico.node.startup.steps.NodeStartup;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code calico-node -allocate-tunnel-addrs}: keeps this node's tunnel addresses right while the
 * node runs, not only at start-up. It watches the IP pools and this node's Node and runs
 * {@link NodeStartup#tunnelAddresses} once in sync, whenever a pool changes, whenever the Node's
 * labels or WireGuard keys change (felix publishes its key after start-up: only then can the
 * WireGuard address be allocated), and every {@code resync} in case a change was missed. A failed
 * run is logged and retried at the next trigger, or after {@code retry}.
 */
final class TunnelAddressDaemon implements SyncerCallbacks {

    private static final Logger LOG = LoggerFactory.getLogger(TunnelAddressDaemon.class);

    /** What of the Node the addresses depend on: the pools' node selectors read labels, WireGuard the keys. */
    private record NodeFacts(Map<String, String> labels, String wireguardKey, String wireguardKeyV6) {
        static NodeFacts of(Node n) {
            NodeStatus st = n.status();
            return new NodeFacts(n.metadata().labels(), st == null ? null : st.wireguardPublicKey(),
                    st == null ? null : st.wireguardPublicKeyV6());
        }
    }

    private final Datastore datastore;
    private final NodeStartup startup;
    private final String nodeName;
    private final boolean wireguardHostEncryption;
    private final Duration resync;
    private final Duration retry;
    private final Semaphore triggered = new Semaphore(0);
    private volatile boolean inSync;
    private NodeFacts facts;

    TunnelAddressDaemon(Datastore datastore, NodeStartup startup, String nodeName, boolean wireguardHostEncryption,
                        Duration resync, Duration retry) {
        this.datastore = Objects.requireNonNull(datastore, "datastore");
        this.startup = Objects.requireNonNull(startup, "startup");
        this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
        this.wireguardHostEncryption = wireguardHostEncryption;
        this.resync = resync;
        this.retry = retry;
    }

    /** Runs until the thread is interrupted. */
    void run() throws InterruptedException {
        WatcherSyncer syncer = new WatcherSyncer(datastore, Set.of(ResourceKind.IP_POOL, ResourceKind.NODE), this);
        syncer.start();
        try {
            boolean failed = false;
            while (!Thread.currentThread().isInterrupted()) {
                boolean woken = triggered.tryAcquire((failed ? retry : resync).toMillis(), TimeUnit.MILLISECONDS);
                triggered.drainPermits();
                if (!inSync) {
                    continue;
                }
                failed = !reconcile(woken ? "a change" : failed ? "a retry" : "the periodic resync");
            }
        } finally {
            syncer.close();
        }
    }

    private boolean reconcile(String why) {
        try {
            List<String> changes = startup.tunnelAddresses(nodeName, wireguardHostEncryption).changes();
            LOG.info("tunnel addresses of node {} after {}: {}", nodeName, why,
                    changes.isEmpty() ? "nothing to change" : String.join("; ", changes));
            return true;
        } catch (RuntimeException e) {
            LOG.warn("tunnel addresses of node {} after {} failed, retrying in {}: {}", nodeName, why, retry,
                    e.getMessage());
            return false;
        }
    }

    @Override
    public void onStatusUpdated(SyncerStatus status) {
        if (status == SyncerStatus.IN_SYNC && !inSync) {
            inSync = true;
            triggered.release();
        }
    }

    @Override
    public void onUpdates(List<Update> updates) {
        boolean changed = false;
        for (Update u : updates) {
            if (u.key().kind() == ResourceKind.IP_POOL) {
                changed = true;
            } else if (u.key().kind() == ResourceKind.NODE && u.key().name().equals(nodeName)) {
                NodeFacts now = u.value() == null ? null : NodeFacts.of((Node) u.value());
                changed |= !Objects.equals(now, facts);
                facts = now;
            }
        }
        if (changed && inSync) {
            triggered.release();
        }
    }
}
