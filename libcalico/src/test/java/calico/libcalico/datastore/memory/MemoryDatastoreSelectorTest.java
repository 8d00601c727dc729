package calico.libcalico.datastore.memory;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThatCode;

import calico.api.model.ResourceKind;
import calico.api.selector.Selector;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * List filtering by label selector. Needs the real selector parser (another helper's work): while
 * {@link Selector} is the placeholder that knows only {@code all()}, the test is skipped by an
 * explicit assumption rather than failing.
 */
class MemoryDatastoreSelectorTest {

    @Test
    void listFiltersByLabelSelector() {
        assumeThatCode(() -> Selector.parse("role == 'db'")).as("real selector parser present")
                .doesNotThrowAnyException();
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
