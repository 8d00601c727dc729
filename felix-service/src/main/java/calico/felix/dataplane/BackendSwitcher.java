package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesBackend;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which policy driver programs the kernel, and the switch between drivers (kernel-dataplane.md
 * invariants 4 and 5): the choice is resolved again only when its inputs change, the driver is
 * switched only when the choice does, and a switch is make-before-break: the new driver is fed
 * the whole state first, and only after that succeeded do the old driver's rules go. Confined to
 * the dataplane thread; reports into the {@link StatusBoard}.
 */
final class BackendSwitcher {

    /** The dataplane's logger: its lines read as before the split (operators filter on it). */
    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);

    private final PolicyDriverFactory factory;
    /** The kernel dataplane's one model, which every driver it creates renders. */
    private final DataplaneModel model;
    private final Supplier<IptablesBackend> detect;
    private final DataplaneObserver observer;
    private final StatusBoard board;
    private final Clock clock;
    private PolicyDriver driver;
    private BackendChoice choice;
    /** The config inputs the current choice was resolved from; null before the first resolution. */
    private BackendChoice.Inputs choiceInputs;
    /** An old driver whose rules go once the new driver has applied successfully. */
    private PolicyDriver retiring;
    /** Drivers replaced while an older one was still retiring. */
    private final List<PolicyDriver> retireLater = new ArrayList<>();

    /**
     * @param detect runs {@code Auto} iptables detection in the programmed namespace
     */
    BackendSwitcher(PolicyDriverFactory factory, DataplaneModel model, Supplier<IptablesBackend> detect,
                    DataplaneObserver observer, StatusBoard board, Clock clock) {
        this.factory = factory;
        this.model = model;
        this.detect = detect;
        this.observer = observer;
        this.board = board;
        this.clock = clock;
    }

    /** {@return the driver programming the kernel now}, null before the first */
    PolicyDriver driver() {
        return driver;
    }

    /**
     * Applies the batch with the driver {@code inputs} choose, switching driver first when the
     * choice changed (the new driver, on the same model, first applies {@code snapshot}: a full
     * resync of the model, which already holds the batch);
     * {@return the driver's stats}, null when there is no driver.
     */
    PolicyDriver.ApplyStats apply(List<DataplaneUpdate> batch, BooleanSupplier moreComing, BackendChoice.Inputs inputs,
                                  Supplier<List<DataplaneUpdate>> snapshot) {
        if (!inputs.equals(choiceInputs)) {
            // Auto detection runs the save tools: if that throws, the next batch tries again.
            BackendChoice next = BackendChoice.resolve(inputs, detect);
            choiceInputs = inputs;
            if (next.equals(choice)) {
                board.backendProblem(null); // back to what runs, e.g. nftablesMode Enabled then Disabled again
            }
            if (driver == null || !next.equals(choice)) {
                PolicyDriver.ApplyStats started = start(next, snapshot);
                if (started != null) {
                    return started;
                }
            }
        }
        if (driver == null) {
            return null;
        }
        PolicyDriver.ApplyStats stats = driver.apply(batch, moreComing);
        retireOld();
        return stats;
    }

    /**
     * Starts the driver for {@code next}, replacing the current one: the new driver is created
     * (if that fails the old one stays) and fed the whole state, and only when that succeeded do
     * the old driver's rules go: its chains and hook jumps only when both drivers use the same
     * kernel sets (iptables NFT and Legacy share ipsets, which the new driver has just replaced by
     * swap), everything it owns otherwise. Until then both rule sets are in place, each complete,
     * so no packet passes that policy denies. If the new driver's first apply fails, the old rules
     * stay until a later apply succeeds. {@return the first apply's stats}, null if the driver
     * could not be created.
     */
    private PolicyDriver.ApplyStats start(BackendChoice next, Supplier<List<DataplaneUpdate>> snapshot) {
        PolicyDriver created;
        try {
            created = factory.create(next, model);
        } catch (RuntimeException e) {
            String problem = "cannot start the " + next.driverName() + " policy driver: " + e.getMessage()
                    + (driver == null ? "; no policy is programmed" : "; keeping " + driver.name());
            board.record(problem);
            board.backendProblem(problem); // stays until the configuration asks for a backend that starts
            return null;
        }
        board.backendProblem(null);
        PolicyDriver old = driver;
        boolean restart = old != null;
        long switchStart = System.nanoTime();
        if (restart) {
            log.warn("Policy backend changes from {} to {}: a full resync of the new one, then the old rules go",
                    old.name(), created.name());
            board.restarted();
            if (retiring == null) {
                retiring = old; // a still-retiring older driver stays first in line (its rules are older still)
            } else {
                retireLater.add(old);
            }
        }
        driver = created;
        choice = next;
        String backend = created.name();
        board.backend(backend);
        board.programmed(StatusBoard.NOTHING);
        observer.backendStarted(backend, restart);
        log.info("Policy backend: {}", backend);
        PolicyDriver.ApplyStats stats = created.apply(snapshot.get());
        if (restart) {
            retireOld();
            Duration took = Duration.ofNanos(System.nanoTime() - switchStart);
            board.switched(new KernelDataplane.BackendSwitch(clock.instant(), old.name(), created.name(), Duration.ZERO,
                    took));
            log.info("Policy backend {} in place after {} ms; the namespace had complete rules throughout", backend,
                    took.toMillis());
        }
        return stats;
    }

    /** Removes the rules of drivers replaced by the current one, now that it has applied successfully. */
    private void retireOld() {
        while (retiring != null) {
            PolicyDriver old = retiring;
            retiring = retireLater.isEmpty() ? null : retireLater.remove(0);
            try {
                if (old.name().equals(driver.name())) {
                    continue; // the same tables: the new driver's resync has already replaced the old one's chains
                }
                if (old.setKind().equals(driver.setKind())) {
                    old.removeRules();
                } else {
                    old.removeAll();
                }
            } catch (RuntimeException e) {
                board.record("removing the " + old.name() + " rules after a backend change failed: " + e);
            } finally {
                old.close();
            }
        }
    }

    /** Releases the driver; its rules stay in the kernel, as when felix restarts. */
    void close() {
        if (driver != null) {
            driver.close();
        }
    }
}
