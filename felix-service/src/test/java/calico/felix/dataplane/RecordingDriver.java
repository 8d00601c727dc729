package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.PolicyDriver;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.function.Predicate;

/**
 * A policy driver for the kernel dataplane's own tests, with no kernel: records every call (as
 * {@code "<name>: <call>"} lines, which the drivers of one test may share, and every applied batch),
 * can hold each apply at a {@link #gate} until the test releases it, and rejects the batches it is
 * told to (throwing, as a driver whose restore failed). Thread-safe: the dataplane thread calls it
 * while the test reads.
 */
class RecordingDriver implements PolicyDriver {

    private final String name;
    private final List<String> events;
    /** Every batch handed to {@link #apply}, rejected ones included, in order. */
    final List<List<DataplaneUpdate>> applied = Collections.synchronizedList(new ArrayList<>());
    /** Counted down when the first apply starts (before the gate). */
    final CountDownLatch entered = new CountDownLatch(1);
    /** Each apply first takes a permit; null: applies pass at once. */
    final Semaphore gate;
    private volatile Predicate<List<DataplaneUpdate>> rejects = batch -> false;
    private volatile String rejection = "";
    private volatile boolean appliedOnce;

    private RecordingDriver(String name, List<String> events, Semaphore gate) {
        this.name = name;
        this.events = events;
        this.gate = gate;
    }

    /** A driver whose applies pass at once, recording into {@code events}. */
    static RecordingDriver open(String name, List<String> events) {
        return new RecordingDriver(name, events, null);
    }

    /** A driver whose every apply waits for a permit of {@link #gate} (none at first). */
    RecordingDriver(String name) {
        this(name, Collections.synchronizedList(new ArrayList<>()), new Semaphore(0));
    }

    /** From now on, an apply of a batch meeting {@code when} throws {@code why} (after recording it). */
    RecordingDriver rejecting(Predicate<List<DataplaneUpdate>> when, String why) {
        rejection = why;
        rejects = when;
        return this;
    }

    /** {@return whether any apply has run} */
    boolean hasApplied() {
        return appliedOnce;
    }

    @Override
    public ApplyStats apply(List<DataplaneUpdate> batch) {
        entered.countDown();
        if (gate != null) {
            gate.acquireUninterruptibly();
        }
        applied.add(List.copyOf(batch));
        boolean first = !appliedOnce;
        if (rejects.test(batch)) {
            appliedOnce = true;
            events.add(name + ": apply " + batch.size() + " (rejected)");
            throw new IllegalStateException(rejection);
        }
        appliedOnce = true;
        events.add(name + ": apply " + batch.size());
        return new ApplyStats(first, 0, 0, 0, 0);
    }

    @Override
    public ApplyStats resync() {
        events.add(name + ": resync");
        return new ApplyStats(true, 0, 0, 0, 0);
    }

    @Override
    public int refresh() {
        events.add(name + ": refresh");
        return 0;
    }

    @Override
    public Programmed programmed() {
        return new Programmed(0, 0, 0, 0);
    }

    @Override
    public void removeAll() {
        events.add(name + ": removeAll");
    }

    @Override
    public void removeRules() {
        events.add(name + ": removeRules");
    }

    /** The iptables drivers share their {@code ipset} sets; any other driver's sets are its own. */
    @Override
    public String setKind() {
        return name.startsWith("iptables") ? "ipset" : name;
    }

    @Override
    public void close() {
        events.add(name + ": close");
    }

    @Override
    public String name() {
        return name;
    }
}
