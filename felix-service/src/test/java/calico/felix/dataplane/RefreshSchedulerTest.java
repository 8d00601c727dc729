package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.routes.RouteManager;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The refresh scheduler alone, on a real dataplane thread with a driver that records when it is
 * read back: the settle runs one settle period after the last arming (a new apply pushes it
 * back; a batch waiting or a periodic refresh cancels it), the periodic refresh runs every
 * interval until stopped (the same interval again keeps its schedule, a new one restarts it), and
 * stale periodic read-backs are retried a settle period later until, after {@value
 * RefreshScheduler#MAX_STALE}, the whole refresh runs on the thread. "Nothing ran" is checked
 * after a marker the same thread runs once the cancelled timer was due (its tasks run in due
 * order). Needs root: the routes part runs in a namespace of its own ({@code rfs-*}).
 */
class RefreshSchedulerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Records each read-back ({@code refreshLater}) and each whole refresh on the thread, with the time. */
    private final class ReadBackDriver extends RecordingDriver {
        final List<Long> readBacks = Collections.synchronizedList(new ArrayList<>());
        final List<Long> wholeRefreshes = Collections.synchronizedList(new ArrayList<>());
        /** {@code board.refreshes()} as each whole refresh began. */
        final List<Long> countedBefore = Collections.synchronizedList(new ArrayList<>());
        /** What each read-back's repair step answers: items repaired, or -1 for stale. */
        volatile int answer;

        ReadBackDriver() {
            super("read-back");
        }

        @Override
        public CompletableFuture<IntSupplier> refreshLater() {
            readBacks.add(System.nanoTime());
            int a = answer;
            return CompletableFuture.completedFuture(() -> a);
        }

        @Override
        public int refresh() {
            countedBefore.add(board.refreshes());
            wholeRefreshes.add(System.nanoTime());
            return 0;
        }
    }

    private final ReadBackDriver driver = new ReadBackDriver();
    private final ApplyQueue queue = new ApplyQueue(1_000);
    private StatusBoard board;
    private NetNs ns;
    private DataplaneThread thread;
    private RefreshScheduler scheduler;

    @AfterEach
    void tearDown() {
        if (thread != null) {
            thread.shutdownNow();
        }
        if (ns != null) {
            ns.close();
        }
    }

    private void start(Duration settle) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        ns = NetNs.create("rfs");
        board = new StatusBoard(DataplaneObserver.NONE);
        thread = new DataplaneThread("refresh-test", board::record);
        thread.run(() -> {
            NetNamespace.enterNamed(ns.name()); // for good: the thread dies with the test
            RouteManager routes = new RouteManager(new Netlink(), new Sysctls());
            scheduler = new RefreshScheduler(thread, board, DataplaneObserver.NONE, routes, () -> driver,
                    new ResyncNeeded(), queue, settle);
        });
    }

    /** Returns once the dataplane thread has run a marker {@code delay} from now, and everything it posted before. */
    private void afterThreadRan(Duration delay) throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        thread.schedule(ran::countDown, delay.toNanos(), "marker");
        assertThat(ran.await(delay.plus(WAIT).toMillis(), TimeUnit.MILLISECONDS)).as("the marker ran").isTrue();
        thread.run(() -> { }); // read-backs finish in a task of their own, posted before this one
    }

    private long firstReadBack() {
        return Await.until("a read-back", WAIT, () -> List.copyOf(driver.readBacks), r -> !r.isEmpty()).get(0);
    }

    @Test
    void theSettleReadsBackOneSettlePeriodAfterTheLastApply() {
        Duration settle = Duration.ofMillis(400);
        start(settle);
        AtomicLong rearmed = new AtomicLong();
        thread.run(scheduler::settleLater);
        // Another apply halfway through: the settle starts again from it.
        thread.schedule(() -> {
            rearmed.set(System.nanoTime());
            scheduler.settleLater();
        }, settle.dividedBy(2).toNanos(), "apply");

        long at = firstReadBack();
        assertThat(rearmed.get()).as("re-armed before the first settle was due").isPositive();
        assertThat(at - rearmed.get()).as("read back a whole settle after the last apply: the first settle was cancelled")
                .isGreaterThanOrEqualTo(settle.toNanos());
        assertThat(board.refreshes()).as("a settle is no periodic refresh").isZero();
        assertThat(driver.wholeRefreshes).as("nor a whole refresh on the thread").isEmpty();
    }

    @Test
    void aSettleThatFindsABatchWaitingLeavesTheReadBackToThatBatch() throws Exception {
        Duration settle = Duration.ofMillis(100);
        start(settle);
        assertThat(queue.offer(List.of(new DataplaneUpdate.InSync()))).isEqualTo(ApplyQueue.Offered.POST_DRAIN);
        thread.run(scheduler::settleLater);

        afterThreadRan(settle.plusMillis(1));
        assertThat(driver.readBacks).as("no read-back: the waiting batch goes first and re-arms it").isEmpty();
    }

    @Test
    void thePeriodicRefreshCancelsAPendingSettleAndStopEndsIt() throws Exception {
        Duration settle = Duration.ofMillis(600);
        Duration interval = Duration.ofMillis(200);
        start(settle);
        thread.run(() -> {
            scheduler.settleLater();
            scheduler.every(interval);
        });

        afterThreadRan(settle.plusMillis(1));
        // On a loaded machine the thread may not have reached the second period yet: wait for it.
        Await.until("two periodic refreshes", WAIT, () -> board.refreshes() >= 2);
        thread.run(() -> { }); // the read-back of the last refresh is recorded
        assertThat((long) driver.readBacks.size()).as("every read-back was a periodic refresh: the settle never ran")
                .isEqualTo(board.refreshes());

        thread.run(scheduler::stop);
        thread.run(() -> { }); // a read-back started before the stop finishes first
        long stopped = board.refreshes();
        int readBacks = driver.readBacks.size();
        afterThreadRan(interval.multipliedBy(3));
        assertThat(board.refreshes()).as("no refresh after stop").isEqualTo(stopped);
        assertThat(driver.readBacks).as("no read-back after stop").hasSize(readBacks);
    }

    @Test
    void theSameIntervalAgainKeepsItsScheduleAndANewOneRestartsIt() {
        start(Duration.ofSeconds(60));
        Duration interval = Duration.ofMillis(1_000);
        AtomicLong again = new AtomicLong();
        thread.run(() -> scheduler.every(interval));
        thread.schedule(() -> {
            again.set(System.nanoTime());
            scheduler.every(interval);
        }, interval.dividedBy(2).toNanos(), "config");

        long first = firstReadBack();
        assertThat(again.get()).as("the same interval was set again before the first refresh").isPositive()
                .isLessThan(first);
        assertThat(first - again.get()).as("the first refresh kept its time").isLessThan(interval.toNanos());

        Duration shorter = Duration.ofMillis(300);
        long changed = thread.call(() -> {
            scheduler.every(shorter);
            return System.nanoTime();
        });
        assertThat(scheduler.interval()).isEqualTo(shorter);
        int before = driver.readBacks.size();
        long next = Await.until("a refresh on the new interval", WAIT, () -> List.copyOf(driver.readBacks),
                r -> r.size() > before).get(before);
        assertThat(next - changed).as("counted from the change").isGreaterThanOrEqualTo(shorter.toNanos());
    }

    @Test
    void staleReadBacksAreRetriedASettleLaterAndAfterThreeTheWholeRefreshRunsOnTheThread() {
        Duration settle = Duration.ofMillis(100);
        start(settle);
        driver.answer = -1; // a write came in between, every time
        thread.run(() -> scheduler.every(Duration.ofMillis(200)));

        long whole = Await.until("a whole refresh on the thread", WAIT, () -> List.copyOf(driver.wholeRefreshes),
                r -> !r.isEmpty()).get(0);
        List<Long> before = driver.readBacks.stream().filter(t -> t < whole).toList();
        assertThat(before).as("stale read-backs before it").hasSizeGreaterThanOrEqualTo(RefreshScheduler.MAX_STALE);
        assertThat(before.get(1) - before.get(0)).as("a stale read-back is retried a settle period later")
                .isGreaterThanOrEqualTo(settle.toNanos());
        assertThat(driver.countedBefore.get(0)).as("no stale read-back counted as a refresh").isZero();
    }
}
