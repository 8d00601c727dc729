package calico.libcalico.datastore;

import calico.api.model.ResourceKey;

/** A datastore failure. {@link #retryable()} says whether the same call may succeed later. */
public abstract sealed class DatastoreException extends RuntimeException {

    protected DatastoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public boolean retryable() {
        return false;
    }

    /** The resource does not exist (or a delete precondition named one that is gone). */
    public static final class NotFound extends DatastoreException {
        public NotFound(ResourceKey key) {
            super(key + " not found", null);
        }
    }

    /** Create of a resource that already exists. */
    public static final class AlreadyExists extends DatastoreException {
        public AlreadyExists(ResourceKey key) {
            super(key + " already exists", null);
        }
    }

    /** The resourceVersion given is not the current one: someone else wrote first. */
    public static final class Conflict extends DatastoreException {
        public Conflict(ResourceKey key, String expected, String actual) {
            super(key + ": resourceVersion " + expected + " is stale (current " + actual + ")", null);
        }
    }

    /** The requested revision is older than the datastore's compaction point. */
    public static final class Compacted extends DatastoreException {
        private final long compactRevision;

        public Compacted(long requested, long compactRevision) {
            super("revision " + requested + " has been compacted (compaction point " + compactRevision + ")", null);
            this.compactRevision = compactRevision;
        }

        public long compactRevision() {
            return compactRevision;
        }
    }

    /** The backend did not answer in time or refused the connection; retry later. */
    public static final class Unavailable extends DatastoreException {
        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }

        @Override
        public boolean retryable() {
            return true;
        }
    }

    /**
     * The backend refused the caller's credentials (401) or the operation (403). Not retryable:
     * the configuration (token, RBAC) must change first.
     */
    public static final class Denied extends DatastoreException {
        public Denied(String message) {
            super(message, null);
        }
    }

    /** The resource failed validation; the cause is the {@code ValidationException} with every error. */
    public static final class Invalid extends DatastoreException {
        public Invalid(calico.api.validation.ValidationException cause) {
            super(cause.getMessage(), cause);
        }

        public calico.api.validation.ValidationException validation() {
            return (calico.api.validation.ValidationException) getCause();
        }
    }
}
