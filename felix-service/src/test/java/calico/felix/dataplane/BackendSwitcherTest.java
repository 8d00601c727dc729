package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.iptables.XtablesLockSettings;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The backend switch alone, with drivers that record what is done to them instead of a kernel
 * (the kernel path: {@link KernelBackendSwitchTest}): choice resolved only when its inputs
 * change, the first driver fed the snapshot, make-before-break on a switch.
 */
class BackendSwitcherTest {

    private final List<String> events = new ArrayList<>();
    private final AtomicInteger detections = new AtomicInteger();
    private final StatusBoard board = new StatusBoard(DataplaneObserver.NONE);
    private String failToCreate;
    private String failFirstApply;
    private final BackendSwitcher switcher = new BackendSwitcher((choice, model) -> {
        String name = choice.driverName();
        if (name.equals(failToCreate)) {
            throw new IllegalStateException(name + " not available");
        }
        events.add(name + ": created");
        RecordingDriver d = RecordingDriver.open(name, events);
        return name.equals(failFirstApply) ? d.rejecting(batch -> !d.hasApplied(), "batch rejected") : d;
    }, new DataplaneModel(), () -> {
        detections.incrementAndGet();
        return IptablesBackend.NFT;
    }, DataplaneObserver.NONE, board, Clock.systemUTC());

    private static final List<DataplaneUpdate> BATCH = List.of(new DataplaneUpdate.InSync());
    private static final List<DataplaneUpdate> SNAPSHOT = List.of(new DataplaneUpdate.InSync(), new DataplaneUpdate.InSync());

    private static BackendChoice.Inputs inputs(String nftablesMode, String iptablesBackend) {
        return new BackendChoice.Inputs(nftablesMode, iptablesBackend, XtablesLockSettings.defaults());
    }

    private PolicyDriver.ApplyStats apply(BackendChoice.Inputs in) {
        return switcher.apply(BATCH, () -> false, in, () -> SNAPSHOT);
    }

    @Test
    void theFirstDriverStartsFromTheSnapshotAndLaterBatchesGoToIt() {
        assertThat(apply(inputs("auto", "auto")).resync()).isTrue();
        assertThat(events).containsExactly("iptables-nft: created", "iptables-nft: apply 2");
        assertThat(board.backend()).isEqualTo("iptables-nft");
        assertThat(apply(inputs("auto", "auto")).resync()).isFalse();
        assertThat(events).endsWith("iptables-nft: apply 1");
        assertThat(detections).as("Auto detection runs once per change of the inputs").hasValue(1);
        assertThat(board.status("", 0, 0, Duration.ZERO).backendRestarts()).isZero();
    }

    @Test
    void aSwitchFeedsTheNewDriverFirstAndThenRemovesOnlyTheOldRulesWhenTheSetsAreShared() {
        apply(inputs("disabled", "nft"));
        events.clear();
        apply(inputs("disabled", "legacy"));
        assertThat(events).containsExactly("iptables-legacy: created", "iptables-legacy: apply 2",
                "iptables-nft: removeRules", "iptables-nft: close");
        KernelDataplane.Status st = board.status("", 0, 0, Duration.ZERO);
        assertThat(st.backendRestarts()).isEqualTo(1);
        assertThat(st.lastBackendSwitch().from()).isEqualTo("iptables-nft");
        assertThat(st.lastBackendSwitch().to()).isEqualTo("iptables-legacy");
        assertThat(st.lastBackendSwitch().unprotected()).isZero();

        events.clear();
        apply(inputs("enabled", "legacy"));
        assertThat(events).as("iptables and nftables share no sets").containsExactly("nftables: created",
                "nftables: apply 2", "iptables-legacy: removeAll", "iptables-legacy: close");
    }

    @Test
    void aDriverThatCannotStartLeavesTheOldOneInPlaceUntilTheConfigAsksForOneThatStarts() {
        failToCreate = "nftables";
        apply(inputs("disabled", "nft"));
        events.clear();
        apply(inputs("enabled", "nft"));
        assertThat(events).as("the old driver applies the batch").containsExactly("iptables-nft: apply 1");
        assertThat(board.errors()).containsExactly(
                "cannot start the nftables policy driver: nftables not available; keeping iptables-nft");
        board.resolvedUpTo(board.failures()); // a later successful batch
        assertThat(board.errors()).as("the backend problem stays").hasSize(1);
        apply(inputs("disabled", "nft"));
        assertThat(board.errors()).isEmpty();
        assertThat(board.status("", 0, 0, Duration.ZERO).backendRestarts()).isZero();
    }

    @Test
    void whenTheNewDriversFirstApplyFailsTheOldRulesStayUntilAnApplySucceeds() {
        apply(inputs("disabled", "nft"));
        failFirstApply = "iptables-legacy";
        events.clear();
        assertThatThrownBy(() -> apply(inputs("disabled", "legacy"))).hasMessageContaining("rejected");
        assertThat(events).containsExactly("iptables-legacy: created", "iptables-legacy: apply 2 (rejected)");
        events.clear();
        apply(inputs("disabled", "legacy"));
        assertThat(events).containsExactly("iptables-legacy: apply 1", "iptables-nft: removeRules", "iptables-nft: close");
    }
}
