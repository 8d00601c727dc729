package calico.felix.dataplane;

import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;

/**
 * What the kernel dataplane reports as it works, for metrics. Called on the dataplane thread
 * ({@link #failed} also on the link monitor's); implementations must be quick, thread-safe and
 * must not throw.
 */
public interface DataplaneObserver {

    DataplaneObserver NONE = new DataplaneObserver() {
    };

    /** {@return an observer telling each of {@code observers} everything, in order} */
    static DataplaneObserver of(DataplaneObserver... observers) {
        java.util.List<DataplaneObserver> all = java.util.List.of(observers);
        return new DataplaneObserver() {
            @Override
            public void applied(Duration took, PolicyDriver.ApplyStats stats, PolicyDriver.Programmed programmed) {
                all.forEach(o -> o.applied(took, stats, programmed));
            }

            @Override
            public void refreshed(int repaired, PolicyDriver.Programmed programmed) {
                all.forEach(o -> o.refreshed(repaired, programmed));
            }

            @Override
            public void failed(String error) {
                all.forEach(o -> o.failed(error));
            }

            @Override
            public void backendStarted(String name, boolean restart) {
                all.forEach(o -> o.backendStarted(name, restart));
            }

            @Override
            public void routesListed(Duration took) {
                all.forEach(o -> o.routesListed(took));
            }

            @Override
            public void interfaceRoutesSynced(Duration took) {
                all.forEach(o -> o.interfaceRoutesSynced(took));
            }
        };
    }

    /** One batch applied (policy driver then routes); {@code stats} null when the driver failed. */
    default void applied(Duration took, PolicyDriver.ApplyStats stats, PolicyDriver.Programmed programmed) {
    }

    /** One periodic (or requested) refresh finished, having repaired {@code repaired} items. */
    default void refreshed(int repaired, PolicyDriver.Programmed programmed) {
    }

    /** A failure was recorded (and will be retried by a resync). */
    default void failed(String error) {
    }

    /** A policy driver became active; {@code restart}: it replaced another one at run time. */
    default void backendStarted(String name, boolean restart) {
    }

    /** The route manager listed the main routing table (a resync), taking {@code took}. */
    default void routesListed(Duration took) {
    }

    /** The route manager brought one workload interface's routes in line, taking {@code took}. */
    default void interfaceRoutesSynced(Duration took) {
    }
}
