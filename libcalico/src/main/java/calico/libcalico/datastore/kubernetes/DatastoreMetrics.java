package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * A datastore's own metrics, for the service that opened it:
 * {@code calico_datastore_invalid_objects_total{kind}}, the stored object versions a list or watch
 * skipped because they do not decode or fail Calico's validation (each version counted once;
 * the log names the object and the field). Only the kubernetes datastore can hold such objects
 * (anything may write its custom resources); other backends register nothing (etcd ends a watch
 * on an undecodable value instead, see {@code design/datastore.md}).
 */
public final class DatastoreMetrics implements MeterBinder {

    public static final String INVALID_OBJECTS = "calico.datastore.invalid.objects";

    private final Datastore datastore;

    public DatastoreMetrics(Datastore datastore) {
        this.datastore = datastore;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!(datastore instanceof KubernetesDatastore kdd)) {
            return;
        }
        // Every kind from the start, at 0: an alert on the rate needs the series before the first skip.
        for (ResourceKind kind : ResourceKind.values()) {
            FunctionCounter.builder(INVALID_OBJECTS, kdd, k -> k.invalidObjects(kind))
                    .tag("kind", kind.kind())
                    .description("Stored object versions skipped because they do not decode or fail Calico's validation")
                    .register(registry);
        }
    }
}
