package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import calico.charts.ImageArchive.Commands;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The images scripts/images.sh built (profile {@code images}: run by the images step, never by a
 * plain build) against what the chart's defaults pull: one archive per image reference, each a
 * valid OCI layout whose configuration has the module's main class, the chart's ports and the
 * right user; each runs on its class archive; the node images run the tools felix, confd/BIRD and the CNI installer exec; the CNI
 * thin client runs on a host with no C library; and goldmane's image, started as its image
 * says in a network namespace of its own, answers its readiness probe.
 */
class ChartImagesTest {

    static final Path IMAGES = Path.of(System.getProperty("calico.images.out",
            Helm.ROOT.resolve("target/images").toString()));
    /** The modules whose images run as root: they program the kernel or write the host's files. */
    static final Set<String> ROOT_IMAGES = Set.of("felix", "confd", "cni-plugin", "node-startup");

    static Path work;
    static Map<String, JsonNode> containers;
    /** Image name (calico-java/NAME) → its module's directory, from each pom's calico.image.name. */
    static Map<String, Path> modules;
    static final Map<String, ImageArchive> archives = new LinkedHashMap<>();

    @BeforeAll
    static void renderAndOpen() throws IOException {
        assertThat(IMAGES).as("the image archives: run scripts/images.sh build first").isDirectory();
        work = Files.createTempDirectory("calico-images-test");
        containers = Rendered.parse(Helm.template().ok().stdout()).containers();
        modules = new LinkedHashMap<>();
        try (Stream<Path> poms = Files.list(Helm.ROOT)) {
            for (Path dir : poms.filter(d -> Files.isRegularFile(d.resolve("pom.xml"))).sorted().toList()) {
                property(dir, "calico.image.name").ifPresent(name -> modules.put(name, dir));
            }
        }
    }

    @AfterAll
    static void cleanUp() {
        if (work != null) {
            Commands.run(List.of("rm", "-rf", work.toString()));
        }
    }

    @Test
    void everyImageOfTheChartIsAnArchiveNamedAndTaggedAsTheChartPullsIt() throws IOException {
        String tag = chartAppVersion();
        Set<String> pulled = new TreeSet<>();
        for (JsonNode c : containers.values()) {
            pulled.add(c.path("image").asText());
        }
        Set<String> built = new TreeSet<>();
        for (String name : modules.keySet()) {
            built.add("calico-java/" + name + ":" + tag);
        }
        assertThat(built).as("the images the modules build are the images the chart pulls").isEqualTo(pulled);
        try (Stream<Path> files = Files.list(IMAGES)) {
            assertThat(files.map(f -> f.getFileName().toString()).sorted().toList())
                    .isEqualTo(modules.keySet().stream().map(n -> n + ".tar").sorted().toList());
        }
        for (String name : modules.keySet()) {
            assertThat(archive(name).reference()).isEqualTo("calico-java/" + name + ":" + tag);
        }
    }

    @Test
    void everyArchiveIsAValidOciLayout() {
        for (String name : modules.keySet()) {
            archive(name).verify();
        }
    }

    @Test
    void eachConfigurationHasTheMainClassUserPortsAndLabelsTheChartExpects() {
        for (var e : containers.entrySet()) {
            JsonNode c = e.getValue();
            String name = imageName(c);
            JsonNode config = archive(name).config();
            String main = property(modules.get(name), "calico.main.class").orElseThrow();
            List<String> entrypoint = strings(config.path("Entrypoint"));
            assertThat(entrypoint).as(e.getKey() + ": the entrypoint runs its module's main class")
                    .startsWith("java").endsWith(main);
            Set<String> exposed = new TreeSet<>();
            config.path("ExposedPorts").fieldNames().forEachRemaining(exposed::add);
            for (JsonNode port : c.path("ports")) {
                assertThat(exposed).as(e.getKey() + ": the image exposes the chart's containerPorts")
                        .contains(port.path("containerPort").asInt() + "/tcp");
            }
            String user = config.path("User").asText();
            assertThat(user).as(e.getKey() + ": root only where the service needs the kernel or the host's files")
                    .isEqualTo(ROOT_IMAGES.contains(name) ? "0:0" : "10001:10001");
            JsonNode security = c.path("securityContext");
            if (security.path("runAsNonRoot").asBoolean() && !security.has("runAsUser")) {
                assertThat(user).as(e.getKey() + ": runAsNonRoot needs a numeric non-root image user").doesNotStartWith("0");
            }
            assertThat(env(config)).as(e.getKey()).containsKeys("PATH", "JAVA_HOME");
            assertThat(config.path("Labels").path("org.opencontainers.image.title").asText()).isEqualTo(name);
            assertThat(config.path("Labels").path("org.opencontainers.image.version").asText()).isEqualTo(chartAppVersion());
        }
    }

    @Test
    void everyServiceImageRunsOnAClassArchiveTrainedForIt() throws IOException {
        // scripts/images.sh trains each JVM image's AppCDS archive and adds it; a failed training only warns there.
        Set<String> images = new TreeSet<>();
        containers.values().forEach(c -> images.add(imageName(c)));
        for (String name : images) {
            List<String> entrypoint = strings(archive(name).config().path("Entrypoint"));
            assertThat(entrypoint).as(name + ": the entrypoint names its archive")
                    .contains("-XX:SharedArchiveFile=/app/appcds.jsa", "-Xshare:auto");
        }
        // The node's JVMs (felix trained up to ready on its own memory store): the archive maps with the image's own
        // options and class path, or -Xshare:on refuses to start ("shared class paths mismatch").
        for (String name : List.of("felix", "confd", "cni-plugin")) {
            List<String> entrypoint = strings(archive(name).config().path("Entrypoint"));
            List<String> command = new ArrayList<>(entrypoint.subList(0, entrypoint.size() - 1)); // all but the main class
            command.removeIf("-Xshare:auto"::equals);
            command.addAll(List.of("-Xshare:on", "-version"));
            Commands.Result r = inImage(rootfs(name), command);
            assertThat(r.exit()).as(name + ": " + command + " in the image: " + r.output()).isZero();
            assertThat(r.output()).as(name).contains("sharing");
        }
    }

    @Test
    void theNodeImagesRunWhatTheChartsCommandsAndTheServicesExec() throws IOException {
        // Each command the chart gives a container (and each exec probe) resolves and runs in its image.
        Map<String, Set<List<String>>> commands = new LinkedHashMap<>();
        for (JsonNode c : containers.values()) {
            for (JsonNode command : List.of(c.path("command"), c.path("livenessProbe").path("exec").path("command"))) {
                if (command.size() > 0) {
                    commands.computeIfAbsent(imageName(c), k -> new LinkedHashSet<>()).add(strings(command));
                }
            }
        }
        assertThat(commands).containsKeys("confd", "cni-plugin");
        // felix: the iptables dataplane's restore/save tools (nft and legacy, v4 and v6) and ipset;
        // confd: `bird -p` and the bird container's bird/birdc; all: the java the entrypoint names.
        List<List<String>> felixTools = List.of(List.of("iptables-nft-restore", "--version"),
                List.of("ip6tables-nft-restore", "--version"), List.of("iptables-legacy-restore", "--version"),
                List.of("ip6tables-legacy-save", "--version"), List.of("ipset", "version"), List.of("nft", "--version"),
                List.of("ip", "-V"), List.of("java", "-version"),
                List.of("test", "-e", "/usr/lib/x86_64-linux-gnu/libbpf.so.1")); // the eBPF dataplane's, through JNA
        List<List<String>> confdTools = List.of(List.of("bird", "--version"), List.of("java", "-version"));
        for (String name : List.of("felix", "confd", "cni-plugin")) {
            Path rootfs = rootfs(name);
            List<List<String>> run = new ArrayList<>(name.equals("felix") ? felixTools : confdTools);
            for (List<String> command : commands.getOrDefault(name, Set.of())) {
                // the chart's own commands: present and executable (birdc needs a running BIRD to answer)
                run.add(List.of("test", "-x", command.get(0)));
            }
            for (List<String> command : run) {
                Commands.Result r = inImage(rootfs, command);
                assertThat(r.exit()).as(name + ": " + command + " in the image: " + r.output()).isZero();
            }
        }
        // The thin client install-cni copies to the host: it runs where there is no C library at all.
        Path bare = Files.createDirectories(work.resolve("bare-host"));
        Files.copy(rootfs("cni-plugin").resolve("opt/calico/cni/calico"), bare.resolve("calico"));
        Commands.Result r = Commands.exec(List.of("unshare", "--mount", "--root=" + bare, "/calico"));
        assertThat(r.output()).as("no daemon: CNI error code 11 naming the socket")
                .contains("\"code\":11").contains("/var/run/calico/cni.sock");
    }

    @Test
    void goldmanesImageStartedAsItsConfigurationSaysAnswersItsReadinessProbe() throws Exception {
        JsonNode container = containers.get("goldmane/goldmane");
        JsonNode config = archive("goldmane").config();
        Path rootfs = rootfs("goldmane");
        // The chart's emptyDir for snapshots, writable by the image's user.
        String user = config.path("User").asText();
        Path snapshots = Files.createDirectories(rootfs.resolve("var/lib/goldmane"));
        Commands.run(List.of("chown", user, snapshots.toString()));
        String ns = NetNs.newName("img");
        Commands.run(List.of("ip", "netns", "add", ns));
        Process process = null;
        try {
            Commands.run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
            List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns, "unshare", "--mount", "--pid",
                    "--fork", "--kill-child", "--mount-proc", "--root=" + rootfs,
                    "--setuid=" + user.split(":")[0], "--setgid=" + user.split(":")[1]));
            command.addAll(strings(config.path("Entrypoint")));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("goldmane.log").toFile());
            pb.environment().clear();
            pb.environment().putAll(env(config));
            pb.environment().putAll(Rendered.env(container));
            process = pb.start();
            int port = container.path("readinessProbe").path("httpGet").path("port").asInt();
            String path = container.path("readinessProbe").path("httpGet").path("path").asText();
            Process started = process;
            Await.until("goldmane's image answers " + path + " on " + port + " in " + ns, Duration.ofSeconds(90), () -> {
                if (!started.isAlive()) {
                    throw new AssertionError("goldmane exited " + started.exitValue() + ": " + log("goldmane.log"));
                }
                return Commands.exec(List.of("ip", "netns", "exec", ns, "curl", "-sf", "-o", "/dev/null",
                        "http://127.0.0.1:" + port + path)).exit() == 0;
            });
            assertThat(Commands.run(List.of("ip", "netns", "exec", ns, "curl", "-s", "http://127.0.0.1:" + port + path)))
                    .contains("\"status\":\"UP\"");
            // It runs as the image's user, not as root.
            assertThat(Commands.run(List.of("ps", "-o", "user=", "--ppid", Long.toString(process.pid()))).strip())
                    .isNotEqualTo("root");
        } finally {
            if (process != null) {
                // unshare --fork blocks SIGTERM, and --kill-child does not outlive --setuid (the
                // credential change clears the parent-death signal): kill java (its namespace's
                // init, so everything in it) first, then unshare.
                List<ProcessHandle> tree = process.descendants().toList();
                tree.forEach(ProcessHandle::destroyForcibly);
                for (ProcessHandle h : tree) {
                    h.onExit().join();
                }
                process.destroyForcibly().waitFor();
            }
            Commands.exec(List.of("ip", "netns", "del", ns));
        }
    }

    private static String log(String name) {
        try {
            return Files.readString(work.resolve(name));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static Commands.Result inImage(Path rootfs, List<String> command) {
        List<String> full = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork", "--kill-child",
                "--mount-proc", "--root=" + rootfs, "env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        full.addAll(command);
        return Commands.exec(full);
    }

    /** The archive of calico-java/NAME, extracted once. */
    private static synchronized ImageArchive archive(String name) {
        return archives.computeIfAbsent(name, n -> {
            try {
                return ImageArchive.open(IMAGES.resolve(n + ".tar"), Files.createDirectories(work.resolve("archive-" + n)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private static final Map<String, Path> rootfses = new LinkedHashMap<>();

    /** The image's root file system, its layers applied once. */
    private static synchronized Path rootfs(String name) throws IOException {
        Path existing = rootfses.get(name);
        if (existing != null) {
            return existing;
        }
        Path rootfs = Files.createDirectories(work.resolve("rootfs-" + name));
        archive(name).unpack(rootfs);
        rootfses.put(name, rootfs);
        return rootfs;
    }

    private static String imageName(JsonNode container) {
        Matcher m = Pattern.compile("^calico-java/([^:]+):").matcher(container.path("image").asText());
        assertThat(m.find()).as("image " + container.path("image").asText()).isTrue();
        return m.group(1);
    }

    private static Map<String, String> env(JsonNode config) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String kv : strings(config.path("Env"))) {
            int eq = kv.indexOf('=');
            env.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return env;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    static String chartAppVersion() {
        try {
            Matcher m = Pattern.compile("(?m)^appVersion:\\s*\"?([^\"\\s]+)\"?")
                    .matcher(Files.readString(Helm.CHART.resolve("Chart.yaml")));
            assertThat(m.find()).isTrue();
            return m.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A module pom's {@code <properties>} value. */
    private static java.util.Optional<String> property(Path module, String name) {
        try {
            Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</").matcher(Files.readString(module.resolve("pom.xml")));
            return m.find() ? java.util.Optional.of(m.group(1).strip()) : java.util.Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
