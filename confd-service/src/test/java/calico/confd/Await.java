package calico.confd;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * libcalico's {@link calico.libcalico.testing.Await} for conditions that do I/O: an
 * {@link IOException} (BIRD or a port not up yet) counts as "not yet" and is named if time runs
 * out; any other exception ends the wait with itself.
 */
public final class Await {

    private Await() {
    }

    public static void until(String what, Duration limit, Callable<Boolean> condition) throws Exception {
        AtomicReference<IOException> last = new AtomicReference<>();
        try {
            calico.libcalico.testing.Await.until(what, limit, () -> {
                try {
                    return condition.call();
                } catch (IOException e) {
                    last.set(e);
                    return false;
                } catch (Exception e) {
                    throw new Failed(e);
                }
            });
        } catch (Failed f) {
            throw (Exception) f.getCause();
        } catch (AssertionError e) {
            throw last.get() == null ? e : new AssertionError(e.getMessage() + ": " + last.get(), e);
        }
    }

    /** Carries a condition's checked exception out of the polling lambda. */
    private static final class Failed extends RuntimeException {
        Failed(Exception cause) {
            super(cause);
        }
    }
}
