package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.calc.DataplaneUpdate;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The hand-over queue alone, without a dataplane thread or a kernel (the whole path: {@link KernelApplyQueueTest}). */
class ApplyQueueTest {

    private static List<DataplaneUpdate> updates(int n) {
        return java.util.Collections.nCopies(n, new DataplaneUpdate.InSync());
    }

    @Test
    void onlyTheFirstBatchBehindATakePostsADrainAndATakeGetsEveryBatchInOrder() throws Exception {
        ApplyQueue q = new ApplyQueue(100);
        List<DataplaneUpdate> a = updates(1);
        List<DataplaneUpdate> b = updates(2);
        List<DataplaneUpdate> c = updates(3);
        assertThat(q.offer(a)).isEqualTo(ApplyQueue.Offered.POST_DRAIN);
        assertThat(q.offer(b)).isEqualTo(ApplyQueue.Offered.QUEUED);
        assertThat(q.counts()).isEqualTo(new ApplyQueue.Counts(2, 2));
        assertThat(q.takeAll()).containsExactly(a, b);
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.offer(c)).as("the drain has taken the queue").isEqualTo(ApplyQueue.Offered.POST_DRAIN);
        q.applied(2);
        assertThat(q.counts()).isEqualTo(new ApplyQueue.Counts(1, 3));
    }

    @Test
    void awaitAppliedWaitsForWhatWasHandedOverAndForHeldBackRewrites() throws Exception {
        ApplyQueue q = new ApplyQueue(100);
        assertThat(q.awaitApplied(Duration.ZERO)).as("nothing handed over").isTrue();
        q.offer(updates(1));
        assertThat(q.awaitApplied(Duration.ofMillis(20))).isFalse();
        q.takeAll();
        ApplyQueue.AfterApply after = q.finished(true);
        assertThat(after).isEqualTo(new ApplyQueue.AfterApply(false, true));
        q.applied(1);
        assertThat(q.awaitApplied(Duration.ofMillis(20))).as("the driver holds rewrites back").isFalse();
        assertThat(q.offer(updates(1))).as("the held-back apply is already posted").isEqualTo(ApplyQueue.Offered.QUEUED);
        q.takeAll();
        assertThat(q.finished(false)).isEqualTo(new ApplyQueue.AfterApply(false, false));
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> q.awaitApplied(Duration.ofSeconds(10)));
        q.applied(1);
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isTrue();

        q.offer(updates(1));
        q.takeAll();
        assertThat(q.offer(updates(1))).as("came during the apply").isEqualTo(ApplyQueue.Offered.POST_DRAIN);
        assertThat(q.finished(true)).as("held, but the drain for the batch that came is posted already")
                .isEqualTo(new ApplyQueue.AfterApply(true, false));
    }

    @Test
    void beyondItsBoundOfferBlocksUntilTheQueueIsTakenAndCloseReleasesEveryone() throws Exception {
        ApplyQueue q = new ApplyQueue(3);
        q.offer(updates(4));
        assertThat(q.arrival().overBound()).isTrue();
        CompletableFuture<ApplyQueue.Offered> blocked = new CompletableFuture<>();
        Thread caller = offerOn(q, blocked);
        awaitWaiting(caller);
        assertThat(blocked).as("blocked while over the bound").isNotDone();
        assertThat(q.takeAll()).hasSize(1);
        assertThat(blocked.get(5, TimeUnit.SECONDS)).isEqualTo(ApplyQueue.Offered.POST_DRAIN);

        q.offer(updates(4));
        CompletableFuture<ApplyQueue.Offered> blockedAgain = new CompletableFuture<>();
        awaitWaiting(offerOn(q, blockedAgain));
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> q.awaitApplied(Duration.ofSeconds(10)));
        q.close();
        assertThat(blockedAgain.get(5, TimeUnit.SECONDS)).isEqualTo(ApplyQueue.Offered.CLOSED);
        assertThat(waiter.get(5, TimeUnit.SECONDS)).isFalse();
    }

    /** Offers one update on a thread of its own, completing {@code result}. */
    private static Thread offerOn(ApplyQueue q, CompletableFuture<ApplyQueue.Offered> result) {
        Thread t = new Thread(() -> {
            try {
                result.complete(q.offer(updates(1)));
            } catch (InterruptedException e) {
                result.completeExceptionally(e);
            }
        }, "offer");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits until {@code t} waits on a monitor: it is blocked inside offer. */
    static void awaitWaiting(Thread t) {
        Await.until(t.getName() + " blocked inside offer", Duration.ofSeconds(5),
                () -> t.getState() == Thread.State.WAITING);
    }
}
