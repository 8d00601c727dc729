package calico.libcalico.datastore.memory;

import static calico.libcalico.datastore.memory.TestResources.globalSet;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import calico.api.model.KubernetesService;
import calico.api.model.KubernetesServiceSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.DatastoreException;
import java.util.List;
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

    /** No backend but the kubernetes datastore holds Services (Calico on etcd has none either): writes are refused. */
    @Test
    void kubernetesServicesAreNeitherStoredNorWatched() {
        try (MemoryDatastore ds = new MemoryDatastore()) {
            KubernetesService svc = new KubernetesService(ObjectMeta.namespaced("shop", "api"),
                    new KubernetesServiceSpec(List.of("10.96.0.10"), null, null,
                            List.of(new KubernetesServiceSpec.ServicePort("http", "TCP", 80, 0))));
            assertThatThrownBy(() -> ds.create(svc)).isInstanceOf(DatastoreException.Invalid.class)
                    .hasMessageContaining("KubernetesService cannot be written");
            assertThatThrownBy(() -> ds.update(svc)).isInstanceOf(DatastoreException.Invalid.class);
            assertThat(ds.presents(ResourceKind.KUBERNETES_SERVICE)).isFalse();
            assertThat(ds.list(ResourceKind.KUBERNETES_SERVICE).items()).isEmpty();
            assertThat(ds.currentRevision()).isEqualTo(MemoryDatastore.INITIAL_REVISION);
        }
    }
}
