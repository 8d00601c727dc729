package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kubernetes objects a datastore could not present: objects that do not decode, and
 * Calico custom resources written around Calico's validation (kubectl straight into the CRD).
 * Lists and watches skip them; this logs each object version once (one warning naming the
 * object and the invalid fields, however many lists and watches meet it) and counts it per
 * Calico kind ({@code calico_datastore_invalid_objects_total}, see
 * {@link DatastoreMetrics}).
 */
final class InvalidObjects {

    private static final Logger LOG = LoggerFactory.getLogger(InvalidObjects.class);
    /** Objects remembered; beyond that the oldest is forgotten (and would be logged again). */
    private static final int REMEMBERED = 10_000;

    private final Map<ResourceKind, LongAdder> counts = new EnumMap<>(ResourceKind.class);
    // Guarded by itself: object ("crd.projectcalico.org/tiers web") → the resourceVersion last reported.
    // reported.size(), readable without the lock: valid reads check it on every object.
    private volatile int remembered;
    private final Map<String, String> reported = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > REMEMBERED;
        }
    };

    InvalidObjects() {
        for (ResourceKind kind : ResourceKind.values()) {
            counts.put(kind, new LongAdder());
        }
    }

    /**
     * One version of {@code object} presents nothing of {@code kind}: logged and counted the
     * first time this version is reported.
     */
    void report(ResourceKind kind, String object, String resourceVersion, DatastoreException.Invalid why) {
        synchronized (reported) {
            String before = reported.put(object, resourceVersion);
            remembered = reported.size();
            if (Objects.equals(before, resourceVersion)) {
                return;
            }
        }
        counts.get(kind).increment();
        LOG.warn("skipping {} at resourceVersion {} ({} not presented): invalid {}", object, resourceVersion,
                kind.kind(), why.validation().errors().stream().map(Object::toString)
                        .collect(java.util.stream.Collectors.joining("; ")));
    }

    /** The object is gone or readable again: a later invalid version is news. */
    void forget(String object) {
        synchronized (reported) {
            reported.remove(object);
            remembered = reported.size();
        }
    }

    /**
     * {@return whether any object is remembered as invalid}: every valid read would otherwise
     * name its object and take the lock only to forget nothing.
     */
    boolean any() {
        return remembered > 0;
    }

    /** {@return how many invalid object versions of {@code kind} were skipped} */
    long count(ResourceKind kind) {
        return counts.get(kind).sum();
    }
}
