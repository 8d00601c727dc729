package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import calico.libcalico.health.TrainingRun;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AppCds} with real JVMs and jars laid out as Spring Boot's ({@code BOOT-INF/classes/}, {@code BOOT-INF/lib/},
 * {@code Start-Class}): a main printing one line and exiting (like a training run stopping at refresh), and a plain
 * main serving until calico-health's {@code TrainingRun} ends it. An archive must be built once and used (the
 * classes come from the shared archive, a nested jar's too), a changed jar must get a new one, and a broken archive
 * or a jar that cannot be extracted must never stop the service starting.
 */
class AppCdsTest {

    private static final String MAIN = """
            public class Hello {
                public static void main(String[] a) {
                    System.out.println("hello VERSION");
                }
            }
            """;

    /**
     * A plain main as confd and the CNI daemon are: it answers {@code extract} as {@link #MAIN} does, otherwise
     * a non-daemon thread serves until the JVM is stopped, and once that thread runs (its ready moment) the main
     * calls calico-health's {@link TrainingRun}: only that ends a training run.
     */
    private static final String SERVER = """
            import java.util.concurrent.CountDownLatch;
            public class Server {
                public static void main(String[] a) throws Exception {
                    CountDownLatch serving = new CountDownLatch(1);
                    Thread server = new Thread(() -> {
                        serving.countDown();
                        try {
                            new CountDownLatch(1).await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    server.start();
                    System.out.println("server serving");
                    calico.libcalico.health.TrainingRun.endOnceReady("server", () -> serving.getCount() == 0);
                }
            }
            """;

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    private AppCds cache(Path dir) {
        return new AppCds(dir, Duration.ofMinutes(3), new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    @Test
    void theArchiveIsBuiltOnceAndItsClassesComeFromIt(@TempDir Path dir) throws Exception {
        Path jar = helloJar(dir, "v1", true);
        AppCds cds = cache(dir.resolve("cache"));

        AppCds.Launch launch = cds.prepare("hello", jar, List.of("-Xmx32m"), Map.of(), List.of());
        Path entry = launch.jar().getParent().getParent();
        assertThat(launch.jar()).isEqualTo(entry.resolve("app").resolve("hello.jar")).isRegularFile();
        assertThat(launch.options()).containsExactly("-XX:SharedArchiveFile=" + entry.resolve("app.jsa"), AppCds.SHARE_AUTO);
        assertThat(entry.resolve("ready")).exists();
        assertThat(Files.readString(entry.resolve("training.log"))).contains("hello v1");
        long built = Files.getLastModifiedTime(entry.resolve("app.jsa")).toMillis();

        // Used: the application's class is loaded from the archive, not from the jar.
        String out = run(launch, "-Xlog:class+load=info");
        assertThat(out).contains("hello v1").containsPattern("Hello source: shared objects file");

        // Once: a second start finds it ready and trains nothing.
        log.reset();
        assertThat(cds.prepare("hello", jar, List.of("-Xmx32m"), Map.of(), List.of())).isEqualTo(launch);
        assertThat(Files.getLastModifiedTime(entry.resolve("app.jsa")).toMillis()).isEqualTo(built);
        assertThat(log.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void aPlainMainsTrainingRunEndsOnceItIsReadyAndItsArchiveIsUsed(@TempDir Path dir) throws Exception {
        Path jar = serverJar(dir);
        // Short: a training run that does not end is what this test is for, and it must not take minutes to say so.
        AppCds cds = new AppCds(dir.resolve("cache"), Duration.ofSeconds(90), new PrintStream(log, true, StandardCharsets.UTF_8));

        AppCds.Launch launch = cds.prepare("server", jar, List.of("-Xmx32m"), Map.of(), List.of());
        assertThat(launch.options()).as(log.toString(StandardCharsets.UTF_8)).contains(AppCds.SHARE_AUTO);
        Path entry = launch.jar().getParent().getParent();
        assertThat(entry.resolve("ready")).exists();
        assertThat(Files.readString(entry.resolve("training.log"))).contains("server serving", "server ready: ending the training run");

        // Used: the main's class and TrainingRun come from the archive (the run ends the same way).
        String out = run(launch, AppCds.PLAIN_TRAINING_END, "-Xlog:class+load=info");
        assertThat(out).containsPattern("Server source: shared objects file")
                .containsPattern("calico.libcalico.health.TrainingRun source: shared objects file");
    }

    @Test
    void aChangedJarOrOtherOptionsGetTheirOwnArchiveAndTheOldOneGoes(@TempDir Path dir) throws Exception {
        AppCds cds = cache(dir.resolve("cache"));
        Path jar = helloJar(dir, "v1", true);
        AppCds.Launch first = cds.prepare("hello", jar, List.of(), Map.of(), List.of());

        helloJar(dir, "v2", true);
        AppCds.Launch second = cds.prepare("hello", jar, List.of(), Map.of(), List.of());
        assertThat(second.jar()).isNotEqualTo(first.jar());
        assertThat(run(second)).contains("hello v2");
        assertThat(entry(first)).as("the changed jar's old archive").doesNotExist();

        AppCds.Launch third = cds.prepare("hello", jar, List.of("-Xss512k"), Map.of(), List.of());
        assertThat(third.jar()).isNotEqualTo(second.jar());
        assertThat(entry(second)).as("the same jar's archive for other options: still of use").exists();
    }

    /**
     * Two trees (FootprintBench's "before" and "after" roots) or two flags files started from one cache, in turn:
     * each keeps its archive (they used to delete each other's, so every start trained again); what no start can
     * use again goes with the next build: an entry of a jar that is gone or changed, or of another JVM.
     */
    @Test
    void twoTreesSharingACacheKeepEachTheirArchive(@TempDir Path dir) throws Exception {
        AppCds cds = cache(dir.resolve("cache"));
        Path before = helloJar(Files.createDirectories(dir.resolve("before")), "before", true);
        Path after = helloJar(Files.createDirectories(dir.resolve("after")), "after", true);
        AppCds.Launch b = cds.prepare("hello", before, List.of("-Xmx32m"), Map.of(), List.of());
        AppCds.Launch a = cds.prepare("hello", after, List.of("-Xmx48m"), Map.of(), List.of());
        assertThat(entry(b)).as("the other tree's archive").exists();

        log.reset();
        assertThat(cds.prepare("hello", before, List.of("-Xmx32m"), Map.of(), List.of())).isEqualTo(b);
        assertThat(cds.prepare("hello", after, List.of("-Xmx48m"), Map.of(), List.of())).isEqualTo(a);
        assertThat(log.toString(StandardCharsets.UTF_8)).as("no training again").isEmpty();
        assertThat(run(b)).contains("hello before");
        assertThat(run(a)).contains("hello after");

        Files.delete(before);
        helloJar(dir.resolve("after"), "after, rebuilt", true);
        // An entry another JVM built, and one from before entries recorded their source.
        Path otherJvm = Files.createDirectories(dir.resolve("cache/hello-00000000000000aa"));
        Files.writeString(otherJvm.resolve("source"), after + "\n" + AppCds.digest(after) + "\nanother JVM\n");
        Path unrecorded = Files.createDirectories(dir.resolve("cache/hello-00000000000000bb"));
        Path otherService = Files.createDirectories(dir.resolve("cache/hello2-00000000000000cc"));
        AppCds.Launch rebuilt = cds.prepare("hello", after, List.of("-Xmx48m"), Map.of(), List.of());
        assertThat(entry(b)).as("a jar that is gone").doesNotExist();
        assertThat(entry(a)).as("a jar that changed").doesNotExist();
        assertThat(otherJvm).as("another JVM's").doesNotExist();
        assertThat(unrecorded).as("no source recorded").doesNotExist();
        assertThat(otherService).as("another service's: not this build's to judge").exists();
        assertThat(run(rebuilt)).contains("hello after, rebuilt");
    }

    /** {@return the cache entry a launch runs from} */
    private static Path entry(AppCds.Launch launch) {
        return launch.jar().getParent().getParent();
    }

    @Test
    void aBrokenArchiveOnlyCostsTheSpeedUp(@TempDir Path dir) throws Exception {
        Path jar = helloJar(dir, "v1", true);
        AppCds.Launch launch = cache(dir.resolve("cache")).prepare("hello", jar, List.of(), Map.of(), List.of());
        Path archive = Path.of(launch.options().get(0).substring("-XX:SharedArchiveFile=".length()));
        Files.write(archive, "not an archive".getBytes(StandardCharsets.UTF_8));

        assertThat(run(launch)).contains("hello v1");
    }

    @Test
    void aJarThatCannotBeExtractedRunsAsItIsAndIsNotRetried(@TempDir Path dir) throws Exception {
        Path jar = helloJar(dir, "v1", false);
        AppCds cds = cache(dir.resolve("cache"));

        AppCds.Launch launch = cds.prepare("hello", jar, List.of(), Map.of(), List.of());
        assertThat(launch).isEqualTo(new AppCds.Launch(jar, List.of()));
        assertThat(log.toString(StandardCharsets.UTF_8)).contains("hello: extracting " + jar + " failed");
        log.reset();
        assertThat(cds.prepare("hello", jar, List.of(), Map.of(), List.of())).isEqualTo(launch);
        assertThat(log.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(cds.prepare("hello", dir.resolve("missing.jar"), List.of(), Map.of(), List.of()))
                .isEqualTo(new AppCds.Launch(dir.resolve("missing.jar"), List.of()));
    }

    @Test
    void onlyTheServicesOfTheAppcdsLineGetAnArchive(@TempDir Path dir) throws Exception {
        Path jar = helloJar(dir, "v1", true);
        Path flags = dir.resolve("flags.conf");
        Files.writeString(flags, "appcds felix\nfelix -Xmx64m\ncni -Xmx32m\n");
        JvmFlags f = JvmFlags.read(flags).withAppCds(cache(dir.resolve("cache")));

        assertThat(f.javaJar("cni", jar, Map.of(), "daemon")).containsExactly("java", "-Xmx32m", "-jar", jar.toString(), "daemon");
        List<String> felix = f.javaJar("felix", jar, Map.of());
        assertThat(felix).startsWith("java", "-Xmx64m").contains(AppCds.SHARE_AUTO).doesNotContain(jar.toString());
        assertThat(JvmFlags.read(flags).javaJar("felix", jar, Map.of())).containsExactly("java", "-Xmx64m", "-jar", jar.toString());
    }

    /** Writes {@code dir/hello.jar} printing {@code hello <version>}: a Spring Boot jar's layout, or a plain jar ({@code boot} false). */
    private static Path helloJar(Path dir, String version, boolean boot) throws IOException {
        Map<String, byte[]> classes = compile(dir, "Hello", MAIN.replace("VERSION", version), null);
        Path jar = dir.resolve("hello.jar");
        if (boot) {
            return bootJar(jar, "Hello", classes, Map.of());
        }
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "Hello");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os, m)) {
            add(out, classes);
        }
        return jar;
    }

    /** {@return the class files of {@code source}}, compiled against {@code classPath} (or nothing). */
    private static Map<String, byte[]> compile(Path dir, String name, String source, String classPath) throws IOException {
        Path src = Files.createTempDirectory(dir, "src");
        Files.writeString(src.resolve(name + ".java"), source);
        List<String> javac = new ArrayList<>(classPath == null ? List.of() : List.of("-cp", classPath));
        javac.addAll(List.of("-d", src.toString(), src.resolve(name + ".java").toString()));
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, javac.toArray(String[]::new));
        assertThat(rc).as("javac").isZero();
        Map<String, byte[]> classes = new java.util.TreeMap<>();
        try (Stream<Path> files = Files.list(src)) {
            for (Path c : files.filter(p -> p.toString().endsWith(".class")).toList()) {
                classes.put(c.getFileName().toString(), Files.readAllBytes(c));
            }
        }
        return classes;
    }

    /** Writes {@code jar} as Spring Boot lays one out: the classes under {@code BOOT-INF/classes/}, each lib a jar under {@code BOOT-INF/lib/}. */
    private static Path bootJar(Path jar, String startClass, Map<String, byte[]> classes, Map<String, Map<String, byte[]>> libs)
            throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "org.springframework.boot.loader.launch.JarLauncher");
        m.getMainAttributes().putValue("Start-Class", startClass);
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os, m)) {
            Map<String, byte[]> nested = new java.util.TreeMap<>();
            classes.forEach((name, bytes) -> nested.put("BOOT-INF/classes/" + name, bytes));
            StringBuilder index = new StringBuilder();
            for (Map.Entry<String, Map<String, byte[]>> lib : libs.entrySet()) {
                java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
                try (JarOutputStream libJar = new JarOutputStream(bytes)) {
                    add(libJar, lib.getValue());
                }
                nested.put("BOOT-INF/lib/" + lib.getKey(), bytes.toByteArray());
                index.append("- \"BOOT-INF/lib/").append(lib.getKey()).append("\"\n");
            }
            nested.put("BOOT-INF/classpath.idx", index.toString().getBytes(StandardCharsets.UTF_8));
            add(out, nested);
        }
        return jar;
    }

    private static void add(JarOutputStream out, Map<String, byte[]> entries) throws IOException {
        for (Map.Entry<String, byte[]> e : entries.entrySet()) {
            out.putNextEntry(new JarEntry(e.getKey()));
            out.write(e.getValue());
            out.closeEntry();
        }
    }

    /** Writes {@code dir/server.jar}: {@link #SERVER} with calico-health's {@link TrainingRun} in a nested jar, as confd's jar holds it. */
    private static Path serverJar(Path dir) throws Exception {
        String health = Path.of(TrainingRun.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        Map<String, byte[]> classes = compile(dir, "Server", SERVER, health);
        String name = TrainingRun.class.getName().replace('.', '/') + ".class";
        byte[] trainingRun;
        try (InputStream in = TrainingRun.class.getClassLoader().getResourceAsStream(name)) {
            trainingRun = in.readAllBytes();
        }
        return bootJar(dir.resolve("server.jar"), "Server", classes, Map.of("calico-health.jar", Map.of(name, trainingRun)));
    }

    private static String run(AppCds.Launch launch, String... more) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("java"));
        cmd.addAll(launch.options());
        cmd.addAll(List.of(more));
        cmd.addAll(List.of("-jar", launch.jar().toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }
}
