package calico.goldmane.store;

import static org.assertj.core.api.Assertions.assertThat;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import org.junit.jupiter.api.Test;

/** What a graceful stop must save, and late flows re-copying their closed bucket at rollover. */
class FlowStoreTest {

    private static final Buckets B = new Buckets(15, 8, 4);

    private static Flow flow(String dst, long start, long packets) {
        return Flow.newBuilder().setKey(FlowKey.newBuilder().setSourceName("a-").setDestName(dst).setProto("tcp"))
                .setStartTime(start).setEndTime(start + 5).setPacketsIn(packets).build();
    }

    @Test
    void unsavedHoldsTheOpenBucketAndLateBuckets() {
        FlowStore s = new FlowStore(B, 10, 100);
        assertThat(s.apply(flow("x-", B.start(98), 3), "n1")).isEqualTo(FlowStore.Outcome.COUNTED);
        assertThat(s.apply(flow("y-", B.start(100), 4), "n1")).isEqualTo(FlowStore.Outcome.COUNTED);
        var unsaved = s.unsaved();
        assertThat(unsaved).extracting(Window::bucket).containsExactly(100, 98);
        assertThat(unsaved.get(1).late()).isTrue();
        assertThat(unsaved.get(1).rows()).singleElement().satisfies(r -> {
            assertThat(r.key().getDestName()).isEqualTo("x-");
            assertThat(r.stats()[Stat.PACKETS_IN]).isEqualTo(3);
        });
        assertThat(unsaved.get(1).claims()).hasSize(1);
    }

    @Test
    void rolloverCopiesTheClosedBucketThenLateOnesOnce() {
        FlowStore s = new FlowStore(B, 10, 100);
        s.apply(flow("x-", B.start(99), 3), "n1");
        s.apply(flow("y-", B.start(100), 4), "n1");
        var closed = s.advanceTo(101);
        assertThat(closed).extracting(Window::bucket).containsExactly(100, 99);
        assertThat(closed).extracting(Window::late).containsExactly(false, true);
        assertThat(s.advanceTo(102)).extracting(Window::bucket).containsExactly(101);
        // A replay of an already counted report is a duplicate even after rollovers.
        assertThat(s.apply(flow("x-", B.start(99), 3), "n1")).isEqualTo(FlowStore.Outcome.DUPLICATE);
        assertThat(s.apply(flow("x-", B.start(99), 3), "n2")).isEqualTo(FlowStore.Outcome.COUNTED);
    }
}
