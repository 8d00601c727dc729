package calico.dataplane.iptables;

import java.nio.file.Path;
import java.time.Duration;

/**
 * FelixConfiguration's xtables lock fields: {@code iptablesLockFilePath} (default
 * {@code /run/xtables.lock}), {@code iptablesLockTimeout} (older {@code iptablesLockTimeoutSecs};
 * zero, the default, means "do not wait") and {@code iptablesLockProbeInterval} (default 50ms).
 */
public record XtablesLockSettings(Path lockFile, Duration timeout, Duration probeInterval) {

    public static final Path DEFAULT_LOCK_FILE = Path.of("/run/xtables.lock");
    public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofMillis(50);

    public XtablesLockSettings {
        if (lockFile == null) {
            throw new IllegalArgumentException("iptablesLockFilePath: must be set");
        }
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("iptablesLockTimeout: must be >= 0, got " + timeout);
        }
        if (probeInterval == null || probeInterval.isNegative() || probeInterval.isZero()) {
            throw new IllegalArgumentException("iptablesLockProbeInterval: must be > 0, got " + probeInterval);
        }
    }

    /** Calico's defaults: {@code /run/xtables.lock}, no waiting, 50ms probe. */
    public static XtablesLockSettings defaults() {
        return new XtablesLockSettings(DEFAULT_LOCK_FILE, Duration.ZERO, DEFAULT_PROBE_INTERVAL);
    }

    /** {@return whether the timeout applies}, i.e. restores get {@code --wait}. */
    public boolean waits() {
        return !timeout.isZero();
    }

    /** {@return the timeout in whole seconds for {@code --wait}}, rounded up so we never wait less than configured. */
    public long waitSeconds() {
        long s = timeout.toSeconds();
        return timeout.equals(Duration.ofSeconds(s)) ? s : s + 1;
    }

    /** {@return the probe interval in microseconds for {@code --wait-interval}} */
    public long probeIntervalMicros() {
        return Math.max(1, probeInterval.toNanos() / 1000);
    }
}
