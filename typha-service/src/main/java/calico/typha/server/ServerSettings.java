package calico.typha.server;

import java.time.Duration;

/**
 * Tuning of a {@link TyphaServer}; {@code calico.typha.app.TyphaProperties} maps the TYPHA_*
 * variables onto it.
 *
 * @param port              gRPC listen port; 0 picks a free one
 * @param host              listen address; empty for all
 * @param maxConnections    streams beyond this are refused with RESOURCE_EXHAUSTED
 *                          ({@code TYPHA_MAXCONNECTIONSUPPERLIMIT})
 * @param pingInterval      how often each client is pinged ({@code TYPHA_PINGINTERVAL})
 * @param pongTimeout       a client that has not answered a ping (or sent its hello) for this
 *                          long is dropped ({@code TYPHA_PONGTIMEOUT})
 * @param maxDeltaLogUpdates updates kept in the shared delta log; a client further behind is
 *                          dropped ({@code TYPHA_MAXDELTALOGUPDATES})
 * @param snapshotChunkBytes bound on one snapshot message's payload
 * @param snapshotMaxAge    a snapshot is reused for new clients for at most this long
 * @param rebalanceTarget   when positive, the number of connections above which the oldest
 *                          surplus clients are asked to reconnect elsewhere; 0 disables
 * @param rebalanceInterval how often the surplus is checked, one client moved per check
 * @param catchUpWait       how long a client's snapshot waits for this typha to reach the
 *                          revisions the client's hello says it has seen (a replica whose watch
 *                          is behind); after that it is served from where this typha is
 */
public record ServerSettings(int port, String host, int maxConnections, Duration pingInterval, Duration pongTimeout,
                             int maxDeltaLogUpdates, int snapshotChunkBytes, Duration snapshotMaxAge,
                             int rebalanceTarget, Duration rebalanceInterval, Duration catchUpWait) {

    public ServerSettings {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " is not a TCP port");
        }
        host = host == null ? "" : host.trim();
        atLeast("maxConnections", maxConnections, 1);
        positive("pingInterval", pingInterval);
        positive("pongTimeout", pongTimeout);
        atLeast("maxDeltaLogUpdates", maxDeltaLogUpdates, 1);
        atLeast("snapshotChunkBytes", snapshotChunkBytes, 1024);
        positive("snapshotMaxAge", snapshotMaxAge);
        atLeast("rebalanceTarget", rebalanceTarget, 0);
        positive("rebalanceInterval", rebalanceInterval);
        positive("catchUpWait", catchUpWait);
    }

    private static void atLeast(String name, int value, int min) {
        if (value < min) {
            throw new IllegalArgumentException(name + ": must be at least " + min + ", got " + value);
        }
    }

    private static void positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": must be positive, got " + d);
        }
    }

    /** Calico-like defaults on a given port. */
    public static ServerSettings defaults(int port) {
        return new ServerSettings(port, "", 10_000, Duration.ofSeconds(10), Duration.ofSeconds(60), 100_000,
                256 * 1024, Duration.ofSeconds(1), 0, Duration.ofSeconds(1), Duration.ofSeconds(5));
    }

    public ServerSettings withPort(int p) {
        return new ServerSettings(p, host, maxConnections, pingInterval, pongTimeout, maxDeltaLogUpdates,
                snapshotChunkBytes, snapshotMaxAge, rebalanceTarget, rebalanceInterval, catchUpWait);
    }

    public ServerSettings withMaxConnections(int n) {
        return new ServerSettings(port, host, n, pingInterval, pongTimeout, maxDeltaLogUpdates, snapshotChunkBytes,
                snapshotMaxAge, rebalanceTarget, rebalanceInterval, catchUpWait);
    }

    public ServerSettings withPing(Duration interval, Duration timeout) {
        return new ServerSettings(port, host, maxConnections, interval, timeout, maxDeltaLogUpdates,
                snapshotChunkBytes, snapshotMaxAge, rebalanceTarget, rebalanceInterval, catchUpWait);
    }

    public ServerSettings withMaxDeltaLogUpdates(int n) {
        return new ServerSettings(port, host, maxConnections, pingInterval, pongTimeout, n, snapshotChunkBytes,
                snapshotMaxAge, rebalanceTarget, rebalanceInterval, catchUpWait);
    }

    public ServerSettings withRebalance(int target, Duration interval) {
        return new ServerSettings(port, host, maxConnections, pingInterval, pongTimeout, maxDeltaLogUpdates,
                snapshotChunkBytes, snapshotMaxAge, target, interval, catchUpWait);
    }

    public ServerSettings withSnapshotMaxAge(Duration age) {
        return new ServerSettings(port, host, maxConnections, pingInterval, pongTimeout, maxDeltaLogUpdates,
                snapshotChunkBytes, age, rebalanceTarget, rebalanceInterval, catchUpWait);
    }

    public ServerSettings withCatchUpWait(Duration wait) {
        return new ServerSettings(port, host, maxConnections, pingInterval, pongTimeout, maxDeltaLogUpdates,
                snapshotChunkBytes, snapshotMaxAge, rebalanceTarget, rebalanceInterval, wait);
    }
}
