package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Failures, their resolution and the admin view, without a dataplane. */
class StatusBoardTest {

    private final List<String> observed = new ArrayList<>();
    private final StatusBoard board = new StatusBoard(new DataplaneObserver() {
        @Override
        public void failed(String error) {
            observed.add(error);
        }
    });

    @Test
    void aSuccessResolvesOnlyTheFailuresRecordedBeforeItStarted() {
        board.record("first");
        long before = board.failures();
        board.record("during the apply");
        board.resolvedUpTo(before);
        assertThat(board.errors()).containsExactly("during the apply");
        assertThat(board.recentErrors()).containsExactly("first", "during the apply");
        assertThat(board.failures()).isEqualTo(2);
        assertThat(observed).containsExactly("first", "during the apply");
    }

    @Test
    void aBackendProblemComesFirstOnceAndStaysUntilCleared() {
        board.record("cannot start nftables");
        board.backendProblem("cannot start nftables");
        board.record("other");
        assertThat(board.errors()).containsExactly("cannot start nftables", "other");
        board.resolvedUpTo(board.failures());
        assertThat(board.errors()).containsExactly("cannot start nftables");
        board.backendProblem(null);
        assertThat(board.errors()).isEmpty();
    }

    @Test
    void failuresKeptAreBounded() {
        for (int i = 0; i < StatusBoard.KEPT_ERRORS + 5; i++) {
            board.record("e" + i);
        }
        assertThat(board.recentErrors()).hasSize(StatusBoard.KEPT_ERRORS).first().isEqualTo("e5");
        assertThat(board.errors()).hasSize(StatusBoard.KEPT_ERRORS);
        assertThat(board.failures()).isEqualTo(StatusBoard.KEPT_ERRORS + 5);
    }

    @Test
    void theStatusCarriesWhatEveryPieceReported() {
        PolicyDriver.ApplyStats stats = new PolicyDriver.ApplyStats(true, 3, 0, 1, 0);
        board.backend("nftables");
        board.applyStarted(0);
        assertThat(board.applyRunningSince()).as("0 means idle: a start at 0 is 1").isEqualTo(1);
        board.applyEnded(5_000_000);
        assertThat(board.applyRunningSince()).isZero();
        KernelApplyStatus last = new KernelApplyStatus(Instant.EPOCH, Duration.ofMillis(5), 7, 2, "nftables", stats, null);
        board.applied(last, true);
        board.programmed(new PolicyDriver.Programmed(3, 10, 1, 4));
        board.pendingInterfaces(Set.of("cali1"));
        board.linkUpdate();
        board.refreshed(2);
        board.repaired(1);
        board.restarted();
        KernelDataplane.BackendSwitch sw = new KernelDataplane.BackendSwitch(Instant.EPOCH, "iptables-nft", "nftables",
                Duration.ZERO, Duration.ofMillis(9));
        board.switched(sw);
        board.inSync();
        board.record("x");
        assertThat(board.status("ns", 1, 9, Duration.ofSeconds(10))).isEqualTo(new KernelDataplane.Status("nftables",
                "ns", last, new PolicyDriver.Programmed(3, 10, 1, 4), 1, 1, 9, Duration.ofMillis(5), 1, 1, 3, 1, 1, 1,
                Set.of("cali1"), Duration.ofSeconds(10), true, sw));
    }
}
