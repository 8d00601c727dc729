package calico.dataplane.netlink;

/**
 * A netlink operation failed with a kernel (or libc) errno. The message names the operation,
 * the errno's symbol and description, and the kernel's extended-ack text when it sent one:
 * {@code "add route 10.0.0.0/24 dev 99: ENODEV (No such device)"}.
 *
 * <p>{@link #alreadyExists()} and {@link #notFound()} let callers make add and delete idempotent.
 */
public final class NetlinkException extends RuntimeException {
    private final String operation;
    private final int errno;
    private final String kernelMessage;

    public NetlinkException(String operation, int errno, String kernelMessage) {
        super(operation + ": " + Errno.name(errno) + " (" + Errno.describe(errno) + ")"
                + (kernelMessage == null || kernelMessage.isEmpty() ? "" : ": " + kernelMessage));
        this.operation = operation;
        this.errno = errno;
        this.kernelMessage = kernelMessage == null ? "" : kernelMessage;
    }

    public String operation() {
        return operation;
    }

    /** {@return the positive errno}, e.g. {@link Errno#EEXIST}. */
    public int errno() {
        return errno;
    }

    /** {@return the errno's symbol}, e.g. {@code "EEXIST"}. */
    public String errnoName() {
        return Errno.name(errno);
    }

    /** {@return the kernel's extended-ack message, or "" when it sent none} */
    public String kernelMessage() {
        return kernelMessage;
    }

    /** {@return whether an add failed because the object is already there} (EEXIST). */
    public boolean alreadyExists() {
        return errno == Errno.EEXIST;
    }

    /**
     * {@return whether a delete failed because the object is absent}: ESRCH for routes,
     * ENOENT for neighbours, EADDRNOTAVAIL for addresses. ENODEV (the interface itself is
     * missing) is deliberately not included: that is a different fact.
     */
    public boolean notFound() {
        return errno == Errno.ESRCH || errno == Errno.ENOENT || errno == Errno.EADDRNOTAVAIL;
    }
}
