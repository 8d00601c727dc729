package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.health.ReporterStatus;
import calico.libcalico.health.Verdict;
import calico.libcalico.syncer.SyncerCallbacks;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one gate between a stream (the datastore's syncer or typha's) and the calculation graph:
 * nothing passes before ClusterInformation default says datastoreReady: true, then everything,
 * in the order it came; FelixStartup says what it waits for.
 */
class DatastoreReadyGateTest {

    private final HealthAggregator health = new HealthAggregator();
    private final List<Object> passed = new ArrayList<>();
    private final DatastoreReadyGate gate = new DatastoreReadyGate(new SyncerCallbacks() {
        @Override
        public void onStatusUpdated(SyncerStatus status) {
            passed.add(status);
        }

        @Override
        public void onUpdates(List<Update> updates) {
            passed.add(updates);
        }
    }, health.registerReporter("FelixStartup", true, true, null), "from the datastore");

    private ReporterStatus startup() {
        return health.status("FelixStartup").orElseThrow();
    }

    private static Update info(Boolean ready, long revision) {
        return Update.of(revision == 1 ? UpdateType.NEW : UpdateType.UPDATED, new ClusterInformation(
                ObjectMeta.named("default"), new ClusterInformationSpec("guid", null, null, ready, null)), revision);
    }

    private static Update tier(long revision) {
        return Update.of(UpdateType.NEW, new Tier(ObjectMeta.named("default"), new TierSpec(null, null)), revision);
    }

    @Test
    void holdsEverythingUntilDatastoreReadyThenReplaysInOrder() {
        assertThat(startup().readiness()).isEqualTo(Verdict.REPORTED_UNHEALTHY);
        assertThat(startup().detail()).isEqualTo(
                "waiting for ClusterInformation default to have datastoreReady: true (from the datastore)");

        gate.onStatusUpdated(SyncerStatus.RESYNC_IN_PROGRESS);
        List<Update> first = List.of(tier(1));
        gate.onUpdates(first);
        gate.onStatusUpdated(SyncerStatus.IN_SYNC);
        assertThat(passed).isEmpty();
        assertThat(startup().detail()).isEqualTo("waiting for ClusterInformation default (from the datastore)");

        List<Update> notYet = List.of(info(false, 1));
        gate.onUpdates(notYet);
        assertThat(passed).isEmpty();
        assertThat(gate.isOpen()).isFalse();
        assertThat(startup().detail()).contains("datastoreReady: true");
        assertThat(startup().readiness()).isEqualTo(Verdict.REPORTED_UNHEALTHY);

        List<Update> ready = List.of(info(true, 2));
        gate.onUpdates(ready);
        assertThat(gate.isOpen()).isTrue();
        assertThat(startup().readiness()).isEqualTo(Verdict.REPORTED_HEALTHY);
        assertThat(startup().detail()).isEqualTo("datastore ready (from the datastore)");
        assertThat(passed).containsExactly(SyncerStatus.RESYNC_IN_PROGRESS, first, SyncerStatus.IN_SYNC, notYet, ready);

        // Checked once: a later datastoreReady: false is an ordinary update.
        List<Update> later = List.of(info(false, 3));
        gate.onUpdates(later);
        gate.onStatusUpdated(SyncerStatus.RESYNC_IN_PROGRESS);
        assertThat(passed).endsWith(later, SyncerStatus.RESYNC_IN_PROGRESS);
        assertThat(startup().readiness()).isEqualTo(Verdict.REPORTED_HEALTHY);
    }
}
