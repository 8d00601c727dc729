package calico.controlplane;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A test JVM in miniature, for {@link TetheredTest}: starts {@code sleep} through {@link Tethered}
 * from a thread of its own, waits until that thread is gone from the kernel too, prints the
 * child's pid, then waits until stdin closes (or it is killed). The child's stdout is the FIFO
 * named by the first argument.
 */
public final class TetheredOwner {

    static final String CALLER = "tether-caller";

    private TetheredOwner() {
    }

    public static void main(String[] args) throws Exception {
        long[] pid = new long[1];
        File out = new File(args[0]); // a FIFO the test reads: its end is the child's exit
        Thread caller = new Thread(() -> pid[0] = Tethered.start(new ProcessBuilder("sleep", "600")
                .redirectOutput(out)).pid(), CALLER);
        caller.start();
        caller.join();
        // join returns when the Java thread is done; the kernel's task may go a moment later.
        while (taskNamed(CALLER)) {
            Thread.onSpinWait();
        }
        System.out.println(pid[0]);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
    }

    private static boolean taskNamed(String name) throws IOException {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            return tasks.anyMatch(t -> {
                try {
                    return Files.readString(t.resolve("comm")).strip().equals(name);
                } catch (IOException gone) {
                    return false;
                }
            });
        }
    }
}
