package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.Dataplane;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Flow-log lookups reach the listeners (flow logs) and never a dataplane (nor so its model). */
class ProgrammedStateTest {

    static final class Recording implements Dataplane {
        final List<List<DataplaneUpdate>> batches = new ArrayList<>();
        final DataplaneModel model = new DataplaneModel();

        @Override
        public void apply(List<DataplaneUpdate> batch) {
            batches.add(batch);
            model.apply(batch);
        }

        @Override
        public DataplaneModel model() {
            return model;
        }

        @Override
        public boolean inSync() {
            return false;
        }
    }

    static final DataplaneUpdate LOOKUP = new DataplaneUpdate.FlowLookupUpdate("GlobalNetworkSet/ext",
            DataplaneUpdate.FlowLookupType.NETWORK_SET, "ext", "", "", Map.of(), List.of("100.64.0.0/10"));

    @Test
    void lookupsGoToListenersOnly() {
        Recording driver = new Recording();
        List<List<DataplaneUpdate>> heard = new ArrayList<>();
        ProgrammedState state = ProgrammedState.of(driver, List.of(heard::add));
        DataplaneUpdate pool = new DataplaneUpdate.IpPoolUpdate("p", "10.65.0.0/16", false, "Never", "Never", false);

        state.apply(List.of(pool, LOOKUP));
        assertThat(heard).containsExactly(List.of(pool, LOOKUP));
        assertThat(driver.batches).containsExactly(List.of(pool));
        boolean hasPool = state.model().read(m -> m.pools().containsKey("p"));
        assertThat(hasPool).isTrue();

        // A batch of lookups only: no driver call at all.
        state.apply(List.of(new DataplaneUpdate.FlowLookupRemove("GlobalNetworkSet/ext")));
        assertThat(heard).hasSize(2);
        assertThat(driver.batches).hasSize(1);
    }
}
