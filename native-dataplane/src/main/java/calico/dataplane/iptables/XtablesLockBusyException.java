package calico.dataplane.iptables;

import java.nio.file.Path;
import java.time.Duration;

/** The xtables lock stayed held by someone else for the whole timeout. Retryable: try again later. */
public final class XtablesLockBusyException extends RuntimeException {

    private final Path lockFile;

    public XtablesLockBusyException(Path lockFile, Duration waited) {
        super("xtables lock " + lockFile + " is held by another process; gave up after " + waited.toMillis()
                + "ms (retryable; see iptablesLockTimeout)");
        this.lockFile = lockFile;
    }

    public Path lockFile() {
        return lockFile;
    }

    /** Always true: the holder will let go. */
    public boolean retryable() {
        return true;
    }
}
