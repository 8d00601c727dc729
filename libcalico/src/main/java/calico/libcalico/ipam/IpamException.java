package calico.libcalico.ipam;

/**
 * Why an IPAM call failed. The message names the request field (when one is at fault) and the
 * reason. Datastore failures ({@link calico.libcalico.datastore.DatastoreException}, e.g.
 * {@code Unavailable}) pass through unchanged. A failed call leaves nothing half-done: the
 * addresses it had already taken are released before it throws.
 */
public abstract sealed class IpamException extends RuntimeException {

    private IpamException(String message) {
        super(message);
    }

    /** The request itself is wrong (a field is missing or malformed). */
    public static final class InvalidRequest extends IpamException {
        public InvalidRequest(String field, String reason) {
            super(field + ": " + reason);
        }
    }

    /** A requested pool does not exist, is disabled, or does not contain the address. */
    public static final class NoSuchPool extends IpamException {
        public NoSuchPool(String field, String reason) {
            super(field + ": " + reason);
        }
    }

    /** Not enough free addresses in the usable pools (or the node may claim no more blocks). */
    public static final class PoolExhausted extends IpamException {
        public PoolExhausted(String message) {
            super(message);
        }
    }

    /** The specific address asked for is already allocated. */
    public static final class AlreadyAllocated extends IpamException {
        public AlreadyAllocated(String field, String reason) {
            super(field + ": " + reason);
        }
    }

    /** Other writers kept winning the compare-and-swap for longer than {@link IpamOptions#maxRetries()}. */
    public static final class TooMuchContention extends IpamException {
        public TooMuchContention(String message) {
            super(message);
        }

        static TooMuchContention after(String field, String what, int attempts) {
            return new TooMuchContention(field + ": " + what + " kept changing under us; gave up after " + attempts
                    + " compare-and-swap attempts");
        }
    }
}
