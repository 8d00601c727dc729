package calico.controllers.leader;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectorBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One active replica, chosen by a {@code coordination.k8s.io} Lease through fabric8's
 * {@link LeaderElector}: {@code onStart} runs when this replica becomes leader, {@code onStop} when it
 * stops being one (its renewal failed, or it is closing); then it stands for election again. Closing
 * releases the Lease, so a standby takes over at once instead of after {@code leaseDuration}.
 *
 * <p>A leader stops at most {@code renewDeadline} after it last sent a renewal that succeeded, on a clock
 * of its own ({@link #checkRenewal}): fabric8's elector only looks at its deadline between two attempts,
 * so a renewal held open by a dead connection, plus the retry period after it, can carry the old leader
 * past {@code leaseDuration}, when a standby already leads (two leaders). The margin is
 * {@code leaseDuration - renewDeadline}: a standby counts the lease from when it saw the renewal, which is
 * after this replica sent it.
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
    /** Runs {@link #checkRenewal} while this replica leads. */
    private final ScheduledExecutorService watchdog;
    /** {@link System#nanoTime} when the last acquire or renewal that succeeded was sent. */
    private volatile long renewedAt;
    private CompletableFuture<?> running;
    /** The watchdog's check while this replica leads (onStart ran, onStop has not); null otherwise. */
    private ScheduledFuture<?> check;
    private boolean closed;

    public LeaderElection(KubernetesClient client, Settings settings, Runnable onStart, Runnable onStop) {
        this.client = client;
        this.settings = settings;
        this.onStart = onStart;
        this.onStop = onStop;
        this.executor = Executors.newCachedThreadPool(daemon("leader-election"));
        this.watchdog = Executors.newSingleThreadScheduledExecutor(daemon("leader-renewal-watch"));
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    public synchronized void start() {
        if (closed) {
            return;
        }
        LeaderElector elector = new LeaderElectorBuilder(client, executor).withConfig(new LeaderElectionConfigBuilder()
                .withName(settings.leaseName())
                .withLock(new RenewalRecordingLock(new LeaseLock(settings.leaseNamespace(), settings.leaseName(),
                        settings.identity())))
                .withLeaseDuration(settings.leaseDuration())
                .withRenewDeadline(settings.renewDeadline())
                .withRetryPeriod(settings.retryPeriod())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(new LeaderCallbacks(this::started, this::stopLeading,
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
        long period = Math.max(10, Math.min(250, settings.renewDeadline().toMillis() / 10));
        synchronized (this) {
            check = watchdog.scheduleWithFixedDelay(this::checkRenewal, period, period, TimeUnit.MILLISECONDS);
        }
        onStart.run();
    }

    /**
     * The elector's stop, or the watchdog's: onStop runs once per time this replica led. {@return whether this
     * replica led until now}; false when it had stopped already
     */
    private boolean stopLeading() {
        synchronized (this) {
            if (check == null) {
                return false;
            }
            check.cancel(false);
            check = null;
        }
        LOG.info("{} no longer leads", settings.identity());
        onStop.run();
        return true;
    }

    /** Stops leading once the last successful renewal was sent more than {@code renewDeadline} ago. */
    private void checkRenewal() {
        long since = System.nanoTime() - renewedAt;
        if (since <= settings.renewDeadline().toNanos()) {
            return;
        }
        LOG.warn("{}: the Lease was last renewed {} ms ago, past the renew deadline {}: stops leading before it "
                + "can expire", settings.identity(), TimeUnit.NANOSECONDS.toMillis(since), settings.renewDeadline());
        if (!stopLeading()) {
            return;
        }
        CompletableFuture<?> f;
        synchronized (this) {
            f = running;
        }
        if (f != null) {
            f.cancel(true); // the election ends; start() stands again unless closing
        }
    }

    /** The Lease, noting when each write that took (an acquire or a renewal) was sent. */
    private final class RenewalRecordingLock implements Lock {
        private final Lock lease;

        RenewalRecordingLock(Lock lease) {
            this.lease = lease;
        }

        @Override
        public LeaderElectionRecord get(KubernetesClient c) {
            return lease.get(c);
        }

        @Override
        public void create(KubernetesClient c, LeaderElectionRecord record) {
            long sent = System.nanoTime();
            lease.create(c, record);
            renewedAt = sent;
        }

        @Override
        public void update(KubernetesClient c, LeaderElectionRecord record) {
            long sent = System.nanoTime();
            lease.update(c, record);
            renewedAt = sent;
        }

        @Override
        public String identity() {
            return lease.identity();
        }

        @Override
        public String describe() {
            return lease.describe();
        }
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
        watchdog.shutdownNow();
    }
}
