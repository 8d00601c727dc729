package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.PolicyDriver;
import calico.felix.calc.FelixSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The kernel dataplane's apply queue, with a policy driver that holds its apply until the test
 * lets it go: batches handed over while an apply runs are applied next as one, in order; the
 * queue bound blocks the caller; {@code awaitApplied} and the status say what is applied; a
 * failing apply is recorded, not thrown. Needs root (the dataplane thread enters a namespace).
 */
class KernelApplyQueueTest {

    /** Holds rewrites back whenever told more is coming, as the nftables driver does; records each call. */
    private static final class HoldingDriver extends RecordingDriver {
        record Call(List<DataplaneUpdate> batch, boolean moreComing) {
        }

        final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
        volatile boolean held;

        HoldingDriver() {
            super("holding");
        }

        @Override
        public ApplyStats apply(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
            ApplyStats stats = apply(batch); // through the gate, as every apply
            try {
                Thread.sleep(60); // the render, during which the stream's next batches queue
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            boolean more = moreComing.getAsBoolean();
            calls.add(new Call(List.copyOf(batch), more));
            held = more;
            return stats;
        }

        @Override
        public boolean heldBack() {
            return held;
        }
    }

    private NetNs ns;
    private KernelDataplane dataplane;

    @AfterEach
    void tearDown() {
        if (dataplane != null) {
            dataplane.close();
        }
        if (ns != null) {
            ns.close();
        }
    }

    /** A dataplane in a namespace of its own with {@code driver} as every backend's driver (needs root). */
    private void start(PolicyDriver driver) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("kaq");
        dataplane = new KernelDataplane(ns.name(), (choice, model) -> driver, DataplaneObserver.NONE);
    }

    private static List<DataplaneUpdate> sets(String... ids) {
        return java.util.Arrays.stream(ids).<DataplaneUpdate>map(id -> new DataplaneUpdate.IpSetUpdate(id,
                calico.felix.calc.IpSetType.NET, java.util.Set.of())).toList();
    }

    @Test
    void batchesQueuedDuringAnApplyAreAppliedNextAsOneInOrder() throws Exception {
        RecordingDriver driver = new RecordingDriver("gated");
        start(driver);

        List<DataplaneUpdate> first = new ArrayList<>();
        first.add(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesBackend", "NFT"))));
        first.addAll(sets("s0"));
        dataplane.apply(first); // returns although the driver is held
        assertThat(driver.entered.await(10, TimeUnit.SECONDS)).as("the first apply started").isTrue();
        long seenHeld = System.nanoTime();
        for (int i = 1; i <= 5; i++) {
            dataplane.apply(sets("s" + i + "a", "s" + i + "b"));
        }
        // The driver waits at its gate: nothing can be applied until the test releases it.
        assertThat(dataplane.awaitApplied(Duration.ZERO)).as("nothing applied while held").isFalse();
        assertThat(dataplane.status().applies()).isZero();
        assertThat(dataplane.applyRunningSince()).as("a held apply is seen by felix's apply timeout, from its start")
                .isNotZero().isLessThanOrEqualTo(seenHeld);

        driver.gate.release(2);
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(driver.applied).hasSize(2);
        assertThat(dataplane.applyRunningSince()).as("idle").isZero();
        assertThat(driver.applied.get(0)).as("the first driver's first apply: the batch that started it")
                .isEqualTo(first);
        assertThat(driver.applied.get(1)).as("the five queued batches, concatenated in order").isEqualTo(
                sets("s1a", "s1b", "s2a", "s2b", "s3a", "s3b", "s4a", "s4b", "s5a", "s5b"));
        KernelDataplane.Status st = dataplane.status();
        assertThat(st.applies()).isEqualTo(2);
        assertThat(st.lastApply().batches()).isEqualTo(5);
        assertThat(st.lastApply().batchSize()).isEqualTo(10);
        assertThat(st.lastApply().error()).isNull();
        assertThat(dataplane.inSync()).isFalse();

        // A batch with InSync is waited for: inSync() is true when apply returns.
        driver.gate.release(1);
        List<DataplaneUpdate> sync = new ArrayList<>(sets("s6"));
        sync.add(new DataplaneUpdate.InSync());
        dataplane.apply(sync);
        assertThat(dataplane.inSync()).isTrue();
        assertThat(dataplane.errors()).isEmpty();
    }

    @Test
    void aStreamingCatchUpTellsTheDriverMoreIsComingAndWhatItHeldBackGoesOnceTheStreamStops() throws Exception {
        HoldingDriver driver = new HoldingDriver();
        start(driver);
        driver.gate.release(1);
        dataplane.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesBackend", "NFT")))));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();

        // A catch-up: batches queue behind a running apply, and keep coming every 20 ms for 1.5 s.
        List<DataplaneUpdate> handed = new ArrayList<>();
        for (int b = 0; b < 75; b++) {
            List<DataplaneUpdate> batch = sets(IntStream.range(0, 50).mapToObj(i -> "c" + handed.size() + i)
                    .toArray(String[]::new));
            handed.addAll(batch);
            dataplane.apply(batch);
            if (b == 2) {
                driver.gate.release(1_000);
            }
            Thread.sleep(20);
        }
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(20))).isTrue();
        assertThat(driver.heldBack()).as("awaitApplied returns once nothing is held back").isFalse();

        List<HoldingDriver.Call> calls = List.copyOf(driver.calls);
        assertThat(calls).as("catch-up applies while batches kept coming were told so")
                .anyMatch(HoldingDriver.Call::moreComing);
        assertThat(calls.get(calls.size() - 1).moreComing()).as("the apply after the stream stopped was not").isFalse();
        List<DataplaneUpdate> applied = new ArrayList<>();
        driver.applied.forEach(batch -> batch.stream().filter(u -> u instanceof DataplaneUpdate.IpSetUpdate)
                .forEach(applied::add));
        assertThat(applied).as("every update applied once, in order").isEqualTo(handed);
        for (HoldingDriver.Call c : calls) {
            if (c.moreComing()) {
                assertThat(c.batch()).hasSizeGreaterThanOrEqualTo(KernelDataplane.MORE_COMING_MIN_UPDATES);
            }
        }
    }

    @Test
    void aFullQueueBlocksTheCallerUntilTheThreadTakesIt() throws Exception {
        RecordingDriver driver = new RecordingDriver("gated");
        start(driver);
        dataplane.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesBackend", "NFT")))));
        assertThat(driver.entered.await(10, TimeUnit.SECONDS)).isTrue();

        // More than the bound queued behind the held apply: the next caller waits.
        dataplane.apply(sets(IntStream.rangeClosed(0, KernelDataplane.MAX_QUEUED_UPDATES)
                .mapToObj(i -> "big" + i).toArray(String[]::new)));
        CountDownLatch returned = new CountDownLatch(1);
        Thread caller = new Thread(() -> {
            dataplane.apply(sets("after"));
            returned.countDown();
        }, "syncer");
        caller.start();
        ApplyQueueTest.awaitWaiting(caller);
        assertThat(returned.getCount()).as("blocked while the queue is over its bound").isOne();

        driver.gate.release(3);
        assertThat(returned.await(10, TimeUnit.SECONDS)).as("released once the thread took the queue").isTrue();
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(driver.applied).hasSize(3);
        assertThat(driver.applied.get(1)).hasSize(KernelDataplane.MAX_QUEUED_UPDATES + 1);
        assertThat(driver.applied.get(2)).isEqualTo(sets("after"));
    }

    @Test
    void aFailedApplyIsRecordedNotThrownAndClearedByTheNextSuccess() throws Exception {
        RecordingDriver driver = new RecordingDriver("gated");
        driver.gate.release(100);
        driver.rejecting(batch -> batch.contains(sets("bad").get(0)), "restore failed on bad");
        start(driver);
        dataplane.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("iptablesBackend", "NFT")))));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue(); // the driver exists: "bad" reaches it
        dataplane.apply(sets("bad"));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(dataplane.errors()).singleElement().asString().contains("restore failed on bad");
        assertThat(dataplane.status().lastApply().error()).contains("restore failed on bad");

        dataplane.apply(sets("good"));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(dataplane.errors()).isEmpty();
        assertThat(dataplane.recentErrors()).hasSize(1);
    }

    @Test
    void noDriverStartsBeforeTheConfigSoTheFirstOneIsTheConfiguredBackend() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("kaq");
        RecordingDriver driver = new RecordingDriver("gated");
        driver.gate.release(100);
        List<BackendChoice> started = Collections.synchronizedList(new ArrayList<>());
        List<Boolean> modelHadEarly = Collections.synchronizedList(new ArrayList<>());
        dataplane = new KernelDataplane(ns.name(), (choice, model) -> {
            started.add(choice);
            modelHadEarly.add(model.ipSets().containsKey("early")); // on the dataplane thread, the model's writer
            return driver;
        }, DataplaneObserver.NONE);

        // What the graph sends before it is in sync: no ConfigUpdate yet (it is held back).
        DataplaneUpdate early = new DataplaneUpdate.IpSetUpdate("early", calico.felix.calc.IpSetType.NET, java.util.Set.of());
        dataplane.apply(List.of(early));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(started).as("no backend is known yet").isEmpty();
        assertThat(dataplane.backend()).isEqualTo("none");

        dataplane.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("nftablesMode", "Enabled")))));
        assertThat(dataplane.awaitApplied(Duration.ofSeconds(10))).isTrue();
        assertThat(started).as("one driver, the configured one, and no switch").singleElement()
                .isInstanceOf(BackendChoice.Nftables.class);
        assertThat(modelHadEarly).as("started on the one model, early updates included").containsExactly(true);
        assertThat(dataplane.model()).isNotNull();
    }
}
