package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The felix_cluster_num_* counts follow the stream: a key counts once however often it is updated, until deleted. */
class ClusterCountsTest {

    private static GlobalNetworkPolicy gnp(String name) {
        return new GlobalNetworkPolicy(ObjectMeta.named(name), new GlobalNetworkPolicySpec("default", 1.0, List.of(),
                List.of(), "all()", List.of(), null, null, null, null, null, null));
    }

    @Test
    void countsKeysPresentPerKind() {
        ClusterCounts c = new ClusterCounts();
        Tier tier = new Tier(ObjectMeta.named("default"), new TierSpec(null, null));
        c.onUpdates(List.of(Update.of(UpdateType.NEW, gnp("a"), 1), Update.of(UpdateType.NEW, gnp("b"), 2),
                Update.of(UpdateType.UPDATED, gnp("a"), 3), Update.of(UpdateType.NEW, tier, 4)));
        assertThat(c.policies()).isEqualTo(2);
        assertThat(c.count(ResourceKind.TIER)).isEqualTo(1);
        assertThat(c.count(ResourceKind.WORKLOAD_ENDPOINT)).isZero();

        c.onUpdates(List.of(Update.deleted(gnp("a").key(), 5), Update.deleted(gnp("never-seen").key(), 6)));
        assertThat(c.policies()).isEqualTo(1);
        assertThatThrownBy(() -> c.count(ResourceKind.IP_POOL)).hasMessageContaining("IP_POOL");
    }
}
