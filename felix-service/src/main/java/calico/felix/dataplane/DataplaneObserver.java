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
}
