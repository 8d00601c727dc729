package calico.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Application class data sharing (AppCDS) for a service's Boot jar, built once per jar and
 * kept in a cache directory. A JDK 17 archive cannot hold classes of the jars nested in a Boot
 * jar, so the jar is first extracted ({@link ExtractedJar}, the layout of Boot's {@code -Djarmode=tools
 * extract}: the application jar beside a {@code lib/} of plain jars), then a training run of that layout
 * stops at the end of the service's start-up and dumps the classes it loaded ({@code -XX:ArchiveClassesAtExit}):
 * a Spring Boot service once its context is refreshed ({@code -Dspring.context.exit=onRefresh}: every
 * bean made, no server or loop started), a plain main once it is ready ({@code -Dcalico.exit=onReady},
 * calico-health's {@code TrainingRun}); the run gets both, each main honours its own. Later starts run
 * the extracted jar with that archive.
 *
 * <p>Never in the way of a start: an entry is keyed by the jar's content, the JVM's version and
 * the service's options, so a changed jar (or JDK, or options) gets an entry of its own and the
 * extracted copy is never older than the jar; an entry is used only once its {@code ready} marker
 * (written last) exists; a failed training is recorded ({@code failed}, with its log) and the jar
 * then runs as it is; and the archive is mapped with {@code -Xshare:auto}, so one the JVM refuses
 * (a mismatch it detects) only costs the speed-up. When a new entry is ready, the service's
 * entries no start can use again go: those whose jar ({@code source}: its path and content digest) is
 * gone or has changed, or that another JVM built. An entry of another tree's jar or of other options is
 * still in use (FootprintBench's "before" and "after" side by side in one cache): it stays.
 */
final class AppCds {

    /** Where a training run ends: a Spring Boot service at context refresh, a plain main once ready (calico-health's TrainingRun). */
    static final String SPRING_TRAINING_END = "-Dspring.context.exit=onRefresh";
    static final String PLAIN_TRAINING_END = "-Dcalico.exit=onReady";

    /** The options that map a ready archive; the JVM validates it and runs without it on a mismatch. */
    static final String SHARE_AUTO = "-Xshare:auto";

    /** The JVM an archive is built by and for: one of another JVM is refused. */
    private static final String JVM = System.getProperty("java.vm.version");

    /** How a service's jar is run: the jar (the extracted one when an archive is ready) and the archive's options. */
    record Launch(Path jar, List<String> options) {
        Launch {
            options = List.copyOf(options);
        }
    }

    private final Path cache;
    private final Duration trainingLimit;
    private final PrintStream log;

    /**
     * @param cache         the cache directory (one entry per service, jar and options)
     * @param trainingLimit how long a training run may take before it is abandoned (not recorded as
     *                      failed: a busy machine may succeed next time)
     * @param log           where building an entry is announced
     */
    AppCds(Path cache, Duration trainingLimit, PrintStream log) {
        this.cache = cache;
        this.trainingLimit = trainingLimit;
        this.log = log;
    }

    /**
     * {@return how to run {@code jar} for {@code service}}: with its archive, built now (a training
     * run with {@code options}, {@code environment} and {@code args}) if the cache has none; the jar
     * as it is when no archive can be made.
     */
    Launch prepare(String service, Path jar, List<String> options, Map<String, String> environment, List<String> args) {
        if (!Files.isRegularFile(jar)) {
            return new Launch(jar, List.of());
        }
        Path entry;
        try {
            String digest = digest(jar);
            entry = cache.resolve(service + "-" + key(digest, options));
            Files.createDirectories(cache);
            // One builder per service at a time (two launchers, or ./calico and a bench, may race).
            try (FileChannel lockFile = FileChannel.open(cache.resolve(service + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE); FileLock ignored = lockFile.lock()) {
                if (!Files.exists(entry.resolve("ready")) && !Files.exists(entry.resolve("failed"))) {
                    build(service, new Source(jar, digest, JVM), options, environment, args, entry);
                }
            }
        } catch (IOException | UncheckedIOException e) {
            log.printf("AppCDS: %s: %s; running %s without an archive%n", service, e.getMessage(), jar.getFileName());
            return new Launch(jar, List.of());
        }
        if (!Files.exists(entry.resolve("ready"))) {
            return new Launch(jar, List.of());
        }
        return new Launch(entry.resolve("app").resolve(jar.getFileName()),
                List.of("-XX:SharedArchiveFile=" + entry.resolve("app.jsa"), SHARE_AUTO));
    }

    private void build(String service, Source source, List<String> options, Map<String, String> environment,
                       List<String> args, Path entry) throws IOException {
        Path jar = source.jar();
        deleteTree(entry);
        Files.createDirectories(entry);
        source.write(entry);
        Path trainingLog = entry.resolve("training.log");
        log.printf("AppCDS: building %s's class archive (once per jar: %s)%n", service, entry);
        Path extractedJar;
        try {
            extractedJar = ExtractedJar.extract(jar, entry.resolve("app"));
        } catch (IOException e) {
            fail(service, entry, "extracting " + jar + " failed: " + e.getMessage());
            return;
        }
        List<String> training = new ArrayList<>(List.of("java"));
        training.addAll(options);
        training.addAll(List.of("-XX:ArchiveClassesAtExit=" + entry.resolve("app.jsa"),
                SPRING_TRAINING_END, PLAIN_TRAINING_END,
                "-jar", extractedJar.toString()));
        training.addAll(args);
        int trained = run(training, environment, trainingLog);
        Path archive = entry.resolve("app.jsa");
        if (trained < 0) {
            log.printf("AppCDS: %s's training run took over %d s; running without an archive this time%n", service,
                    trainingLimit.toSeconds());
            deleteTree(entry);
            return;
        }
        if (trained != 0 || !Files.isRegularFile(archive) || Files.size(archive) == 0) {
            fail(service, entry, "the training run exited " + trained + (Files.isRegularFile(archive) ? "" : " without an archive"));
            return;
        }
        Files.writeString(entry.resolve("ready"), jar + "\n", StandardCharsets.UTF_8);
        pruneStale(service, source);
        log.printf("AppCDS: %s's archive ready (%d MiB)%n", service, Files.size(archive) >> 20);
    }

    private void fail(String service, Path entry, String reason) throws IOException {
        Files.writeString(entry.resolve("failed"), reason + "\n", StandardCharsets.UTF_8);
        log.printf("AppCDS: %s: %s (log: %s); it runs without an archive%n", service, reason, entry.resolve("training.log"));
    }

    /** {@return the exit code}, or -1 when it ran past the training limit (then killed). */
    private int run(List<String> command, Map<String, String> environment, Path output) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(output.toFile()));
        pb.environment().putAll(environment);
        Process p = pb.start();
        p.getOutputStream().close();
        try {
            if (!p.waitFor(trainingLimit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor();
                return -1;
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /**
     * Removes the service's entries that no start can use again (the jar they were built from is gone or
     * changed, or another JVM built them; an entry without a readable {@code source} predates it); entries of
     * another jar that is still as it was, or of other options, are kept: another tree or flags file uses them.
     */
    private void pruneStale(String service, Source current) throws IOException {
        Map<Path, String> digests = new HashMap<>(Map.of(current.jar(), current.digest()));
        try (Stream<Path> s = Files.list(cache)) {
            for (Path p : s.filter(p -> Files.isDirectory(p)
                    && p.getFileName().toString().matches(java.util.regex.Pattern.quote(service) + "-[0-9a-f]{16}")).toList()) {
                Optional<Source> built = Source.read(p);
                boolean stale = built.map(b -> !b.jvm().equals(JVM) || !b.digest().equals(digests.computeIfAbsent(b.jar(),
                        j -> Files.isRegularFile(j) ? digest(j) : ""))).orElse(true);
                if (stale) {
                    deleteTree(p);
                }
            }
        }
    }

    /** What an entry was built from (its {@code source} file, written first): the jar, its content's digest, the JVM. */
    record Source(Path jar, String digest, String jvm) {

        void write(Path entry) throws IOException {
            Files.writeString(entry.resolve("source"), jar + "\n" + digest + "\n" + jvm + "\n", StandardCharsets.UTF_8);
        }

        static Optional<Source> read(Path entry) {
            try {
                List<String> lines = Files.readAllLines(entry.resolve("source"), StandardCharsets.UTF_8);
                return lines.size() == 3 ? Optional.of(new Source(Path.of(lines.get(0)), lines.get(1), lines.get(2)))
                        : Optional.empty();
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
    }

    /** {@return SHA-256 of the jar's bytes, in hex} */
    static String digest(Path jar) {
        try (InputStream in = Files.newInputStream(jar)) {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                sha.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + jar, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@return 16 hex digits of SHA-256 over the jar's digest, the JVM's version and the options} */
    static String key(String jarDigest, List<String> options) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update((jarDigest + "\0" + JVM + "\0" + String.join("\0", options)).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
