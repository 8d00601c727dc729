package calico.goldmane.persist;

import calico.goldmane.engine.WindowListener;
import calico.goldmane.store.Labels;
import calico.goldmane.store.Window;
import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ring on local disk: one file per bucket ({@code bucket-<start>.snap}), written by a
 * background thread when the bucket closes (and again if late flows change it), replaced
 * atomically, deleted once it falls out of retention. A file holds the bucket's rows as
 * length-delimited {@link Flow} messages and the bucket's de-duplication claims, so that after a
 * restart a felix replay is recognised.
 */
public final class SnapshotStore implements WindowListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SnapshotStore.class);
    private static final int MAGIC = 0x474d5331; // "GMS1"
    private static final String PREFIX = "bucket-";
    private static final String SUFFIX = ".snap";

    private final Path dir;
    private final long widthSeconds;
    private final int retained;
    private final BiConsumer<String, String> outcome;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "goldmane-snapshots");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param outcome told ("write"|"restore", "ok"|"error") for metrics
     */
    public SnapshotStore(Path dir, long widthSeconds, int retainedBuckets, BiConsumer<String, String> outcome) {
        this.dir = dir;
        this.widthSeconds = widthSeconds;
        this.retained = retainedBuckets;
        this.outcome = outcome;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("SNAPSHOT_DIR: cannot create " + dir, e);
        }
        if (!Files.isWritable(dir)) {
            throw new IllegalStateException("SNAPSHOT_DIR: " + dir + " is not writable");
        }
    }

    @Override
    public void onWindow(Window w) {
        writer.execute(() -> write(w));
    }

    /** Writes synchronously (the open bucket at shutdown). */
    public void writeNow(Window w) {
        write(w);
    }

    private void write(Window w) {
        Path target = dir.resolve(PREFIX + w.start() + SUFFIX);
        Path tmp = dir.resolve(PREFIX + w.start() + SUFFIX + ".tmp");
        try {
            try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16);
                 DataOutputStream out = new DataOutputStream(os)) {
                out.writeInt(MAGIC);
                out.writeLong(w.start());
                out.writeLong(w.end());
                out.writeInt(w.rows().size());
                for (Window.Row r : w.rows()) {
                    r.toFlow(w.start(), w.end()).writeDelimitedTo(out);
                }
                out.writeInt(w.claims().size());
                for (Window.Claim c : w.claims()) {
                    out.writeUTF(c.node());
                    c.key().writeDelimitedTo(out);
                    out.writeLong(c.start());
                    out.writeLong(c.end());
                }
            }
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            prune(w.bucket());
            outcome.accept("write", "ok");
        } catch (IOException | RuntimeException e) {
            log.warn("snapshot of bucket {} failed", w.start(), e);
            outcome.accept("write", "error");
        }
    }

    /** Deletes files that no ring ending at {@code newest} retains. */
    private void prune(int newest) throws IOException {
        long oldestStart = (newest - retained + 1L) * widthSeconds;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Long start = startOf(p);
                if (start != null && start < oldestStart) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static Long startOf(Path p) {
        String n = p.getFileName().toString();
        if (!n.startsWith(PREFIX) || !n.endsWith(SUFFIX)) {
            return null;
        }
        try {
            return Long.parseLong(n.substring(PREFIX.length(), n.length() - SUFFIX.length()));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** {@return the saved windows starting at or after {@code oldestStart}, oldest first; unreadable files are skipped} */
    public List<Window> load(long oldestStart) {
        var out = new ArrayList<Window>();
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> startOf(p) != null).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("SNAPSHOT_DIR: cannot list " + dir, e);
        }
        for (Path p : files) {
            long start = startOf(p);
            if (start < oldestStart) {
                continue;
            }
            try {
                out.add(read(p));
                outcome.accept("restore", "ok");
            } catch (IOException | RuntimeException e) {
                log.warn("skipping unreadable snapshot {}", p, e);
                outcome.accept("restore", "error");
            }
        }
        out.sort(java.util.Comparator.comparingLong(Window::start));
        return out;
    }

    private Window read(Path p) throws IOException {
        try (InputStream is = new BufferedInputStream(Files.newInputStream(p), 1 << 16);
             DataInputStream in = new DataInputStream(is)) {
            if (in.readInt() != MAGIC) {
                throw new IOException("not a goldmane snapshot");
            }
            long start = in.readLong();
            long end = in.readLong();
            if (end - start != widthSeconds) {
                throw new IOException("bucket width " + (end - start) + " s differs from AGGREGATION_WINDOW");
            }
            int n = in.readInt();
            var rows = new ArrayList<Window.Row>(n);
            for (int i = 0; i < n; i++) {
                Flow f = Flow.parseDelimitedFrom(in);
                long[] s = new long[calico.goldmane.store.Stat.COUNT];
                s[0] = f.getPacketsIn();
                s[1] = f.getPacketsOut();
                s[2] = f.getBytesIn();
                s[3] = f.getBytesOut();
                s[4] = f.getNumConnectionsStarted();
                s[5] = f.getNumConnectionsCompleted();
                s[6] = f.getNumConnectionsLive();
                rows.add(new Window.Row(0, f.getKey(), s, new Labels(List.copyOf(f.getSourceLabelsList()),
                        List.copyOf(f.getDestLabelsList())), List.copyOf(f.getSourceIpsList()),
                        List.copyOf(f.getDestIpsList())));
            }
            int c = in.readInt();
            var claims = new ArrayList<Window.Claim>(c);
            for (int i = 0; i < c; i++) {
                String node = in.readUTF();
                FlowKey key = FlowKey.parseDelimitedFrom(in);
                claims.add(new Window.Claim(node, key, in.readLong(), in.readLong()));
            }
            return new Window((int) Math.floorDiv(start, widthSeconds), start, end, rows, claims, false);
        }
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
