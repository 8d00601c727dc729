package calico.libcalico.datastore.memory;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import calico.api.model.Resource;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.DatastoreException;
import org.junit.jupiter.api.Test;

/** Writes go through {@link ResourceValidator}: an invalid resource is rejected whole and not stored. */
class MemoryDatastoreValidationTest {

    @Test
    void aResourceTheValidatorRejectsIsInvalidAndNotStored() {
        Resource bad = globalSet("bad", "not-a-cidr");
        Throwable rejected = catchThrowable(() -> ResourceValidator.get().defaultAndValidate(bad));
        assertThat(rejected).isInstanceOf(ValidationException.class);

        try (MemoryDatastore ds = new MemoryDatastore()) {
            Resource good = ds.create(globalSet("bad", "10.0.0.0/24"));

            assertThatThrownBy(() -> ds.create(bad))
                    .isInstanceOfSatisfying(DatastoreException.Invalid.class, e -> assertThat(e.validation().errors())
                            .isEqualTo(((ValidationException) rejected).errors()));
            assertThatThrownBy(() -> ds.update(bad)).isInstanceOf(DatastoreException.Invalid.class);
            assertThat(ds.get(good.key())).contains(good);
            assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION + 1);
        }
    }
}
