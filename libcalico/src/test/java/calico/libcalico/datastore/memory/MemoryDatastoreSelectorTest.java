package calico.libcalico.datastore.memory;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** List filtering by a Calico label selector over {@code metadata.labels}. */
class MemoryDatastoreSelectorTest {

    @Test
    void listFiltersByLabelSelector() {
        try (MemoryDatastore ds = new MemoryDatastore()) {
            ds.create(globalSet("db1", "10.0.0.0/24", Map.of("role", "db")));
            ds.create(globalSet("web1", "10.0.1.0/24", Map.of("role", "web")));
            ds.create(globalSet("db2", "10.0.2.0/24", Map.of("role", "db", "tier", "gold")));

            assertThat(ds.list(ResourceKind.GLOBAL_NETWORK_SET, null, "role == 'db'").items())
                    .extracting(r -> r.metadata().name()).containsExactly("db1", "db2");
            assertThat(ds.list(ResourceKind.GLOBAL_NETWORK_SET, null, "role == 'db' && has(tier)").items())
                    .extracting(r -> r.metadata().name()).containsExactly("db2");
        }
    }
}
