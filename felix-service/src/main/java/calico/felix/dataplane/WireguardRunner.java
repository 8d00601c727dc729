package calico.felix.dataplane;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.wireguard.WireguardManager;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the {@link WireguardManager} runs, all on the dataplane thread: after each batch
 * ({@link #apply}, incremental or a resync), again after a failure (1 s later, doubling to 30 s,
 * without waiting for a batch: a restarted wireguard-go may find its port still held by the dead
 * one), every {@code routeRefreshInterval} (a full read-back and repair, as Calico refreshes its
 * route tables; 90 s when unset) and when the device's link goes (the daemon died: the device is
 * made again). Failures are recorded through {@code record}, never thrown, so WireGuard never
 * holds back policy or routes.
 */
final class WireguardRunner {

    private static final Logger log = LoggerFactory.getLogger(WireguardRunner.class);
    static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    static final Duration MAX_RETRY = Duration.ofSeconds(30);
    static final Duration DEFAULT_REFRESH = Duration.ofSeconds(90);

    private final WireguardManager manager;
    private final DataplaneThread thread;
    private final DataplaneModel model;
    private final Consumer<String> record;
    /** The delay of the next retry, null while the last attempt succeeded. */
    private Duration retryDelay;
    private boolean retryPending;
    private Duration refreshEvery;
    private ScheduledFuture<?> refresh;

    WireguardRunner(WireguardManager manager, DataplaneThread thread, DataplaneModel model, Consumer<String> record) {
        this.manager = manager;
        this.thread = thread;
        this.model = model;
        this.record = record;
    }

    /**
     * After a batch: programs the changes, or everything on a resync; (re)schedules the refresh
     * for the config. A batch that changed nothing WireGuard reads ({@code inputsChanged} false)
     * computes no plan, unless the last attempt failed (a batch retries it, as the timer does).
     */
    void apply(boolean resync, boolean inputsChanged) {
        scheduleRefresh();
        if (resync || inputsChanged || retryDelay != null) {
            run(resync);
        }
    }

    /** A link went: when it was the WireGuard device, makes it again. */
    void onLinkDeleted(String name) {
        if (name.equals(manager.device())) {
            log.warn("WireGuard device {} disappeared; making it again", name);
            run(true);
        }
    }

    private void run(boolean resync) {
        try {
            if (resync) {
                manager.resync();
            } else {
                manager.update();
            }
            retryDelay = null;
        } catch (RuntimeException e) {
            record.accept("WireGuard: " + e.getMessage());
            retryDelay = retryDelay == null ? FIRST_RETRY
                    : retryDelay.multipliedBy(2).compareTo(MAX_RETRY) > 0 ? MAX_RETRY : retryDelay.multipliedBy(2);
            if (!retryPending) {
                retryPending = true;
                thread.schedule(() -> {
                    retryPending = false;
                    run(true);
                }, retryDelay.toNanos(), "WireGuard retry");
            }
        }
    }

    private void scheduleRefresh() {
        Duration every = model.config().routeRefreshInterval();
        if (every.isNegative() || every.isZero()) {
            every = DEFAULT_REFRESH;
        }
        if (every.equals(refreshEvery)) {
            return;
        }
        refreshEvery = every;
        if (refresh != null) {
            refresh.cancel(false);
        }
        refresh = thread.every(() -> {
            try {
                run(true);
            } catch (RuntimeException e) {
                record.accept("WireGuard refresh: " + e); // never ends the timer
            }
        }, every.toMillis());
    }

    void close() {
        if (refresh != null) {
            refresh.cancel(false);
        }
        manager.close(); // the device stays, with its key, as the rules do when felix restarts
    }
}
