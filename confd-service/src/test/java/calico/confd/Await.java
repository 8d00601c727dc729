package calico.confd;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;

/** Polls a condition until it holds; an {@link IOException} (BIRD not up yet) counts as "not yet". */
public final class Await {

    private Await() {
    }

    public static void until(String what, Duration limit, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (condition.call()) {
                    return;
                }
            } catch (IOException e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("timed out waiting for " + what + (last == null ? "" : ": " + last));
    }
}
