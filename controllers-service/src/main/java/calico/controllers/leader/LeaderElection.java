package calico.controllers.leader;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectorBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One active replica, chosen by a {@code coordination.k8s.io} Lease through fabric8's
 * {@link LeaderElector}: {@code onStart} runs when this replica becomes leader, {@code onStop} when it
 * stops being one (its renewal failed, or it is closing); then it stands for election again. Closing
 * releases the Lease, so a standby takes over at once instead of after {@code leaseDuration}.
 */
public final class LeaderElection implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);

    /**
     * @param leaseName      the Lease's name
     * @param leaseNamespace its namespace
     * @param identity       this replica's name in the Lease's {@code holderIdentity}
     * @param leaseDuration  how long a lease holds without renewal
     * @param renewDeadline  how long the leader tries to renew before giving up
     * @param retryPeriod    how often candidates try
     */
    public record Settings(String leaseName, String leaseNamespace, String identity, Duration leaseDuration,
                           Duration renewDeadline, Duration retryPeriod) {
    }

    private final KubernetesClient client;
    private final Settings settings;
    private final Runnable onStart;
    private final Runnable onStop;
    private final ExecutorService executor;
    private CompletableFuture<?> running;
    private boolean closed;

    public LeaderElection(KubernetesClient client, Settings settings, Runnable onStart, Runnable onStop) {
        this.client = client;
        this.settings = settings;
        this.onStart = onStart;
        this.onStop = onStop;
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "leader-election");
            t.setDaemon(true);
            return t;
        });
    }

    public synchronized void start() {
        if (closed) {
            return;
        }
        LeaderElector elector = new LeaderElectorBuilder(client, executor).withConfig(new LeaderElectionConfigBuilder()
                .withName(settings.leaseName())
                .withLock(new LeaseLock(settings.leaseNamespace(), settings.leaseName(), settings.identity()))
                .withLeaseDuration(settings.leaseDuration())
                .withRenewDeadline(settings.renewDeadline())
                .withRetryPeriod(settings.retryPeriod())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(new LeaderCallbacks(this::started, this::stopped,
                        leader -> LOG.info("leader is now {}", leader)))
                .build()).build();
        running = elector.start();
        running.whenComplete((ok, error) -> {
            synchronized (this) {
                if (!closed) {
                    LOG.info("{}: election ended ({}); standing again", settings.identity(),
                            error == null ? "lost the lease" : error.toString());
                    executor.execute(this::start);
                }
            }
        });
    }

    private void started() {
        LOG.info("{} leads (Lease {}/{})", settings.identity(), settings.leaseNamespace(), settings.leaseName());
        onStart.run();
    }

    private void stopped() {
        LOG.info("{} no longer leads", settings.identity());
        onStop.run();
    }

    @Override
    public void close() {
        CompletableFuture<?> f;
        synchronized (this) {
            closed = true;
            f = running;
        }
        if (f != null) {
            f.cancel(true);
        }
        executor.shutdown();
    }
}
