package calico.dataplane.bpf;

/**
 * A libbpf or kernel call failed. The message names what was being done (the program, the
 * interface, the map) and the errno; a verifier rejection carries the tail of the verifier's log.
 */
public final class BpfException extends RuntimeException {

    private final int errno;

    public BpfException(String message, int errno) {
        super(message + ": " + Errno.describe(errno));
        this.errno = errno;
    }

    /** {@return the positive errno of the failed call} (0 when none) */
    public int errno() {
        return errno;
    }

    /** errno values and names, for messages. */
    static final class Errno {
        static final int ENOENT = 2;
        static final int EEXIST = 17;
        static final int EINVAL = 22;
        static final int EOPNOTSUPP = 95;
        /** The kernel's own "operation not supported" (not POSIX's), e.g. a map type without batch calls. */
        static final int ENOTSUPP = 524;

        private Errno() {
        }

        /** {@return whether a batch call's failure says the map type has no batch operations} */
        static boolean noBatch(int errno) {
            return errno == EINVAL || errno == ENOTSUPP || errno == EOPNOTSUPP;
        }

        static String describe(int errno) {
            String name = switch (errno) {
                case 1 -> "EPERM";
                case ENOENT -> "ENOENT";
                case 7 -> "E2BIG";
                case 9 -> "EBADF";
                case 12 -> "ENOMEM";
                case 13 -> "EACCES";
                case 16 -> "EBUSY";
                case EEXIST -> "EEXIST";
                case 19 -> "ENODEV";
                case EINVAL -> "EINVAL";
                case 28 -> "ENOSPC";
                case EOPNOTSUPP -> "EOPNOTSUPP";
                case ENOTSUPP -> "ENOTSUPP";
                default -> "errno";
            };
            return name + " (" + errno + ")";
        }
    }
}
