package calico.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JVM options of each service's process, from {@code scripts/lib/jvm-flags.conf} (one line
 * per service: its name, then its options; {@code #} starts a comment; the line {@code env}
 * holds {@code NAME=value} words set in every JVM's environment, e.g. glibc's
 * {@code MALLOC_ARENA_MAX}). {@code ./calico} reads the same file for the cluster-wide services,
 * so one file says how every JVM of a local run starts; the footprint bench passes another file
 * ({@code --jvm-flags}) to compare. The {@code appcds} line names the services whose jar runs with
 * an AppCDS archive ({@link AppCds}).
 */
record JvmFlags(Map<String, List<String>> byService, Optional<AppCds> appCds) {

    static final JvmFlags NONE = new JvmFlags(Map.of(), Optional.empty());

    /** The line naming the services whose jar runs with an AppCDS archive ({@link AppCds}). */
    static final String APPCDS = "appcds";

    JvmFlags {
        byService = Map.copyOf(byService);
    }

    /** {@return these options, the services of the {@code appcds} line run with archives kept in {@code cache}} */
    JvmFlags withAppCds(AppCds cache) {
        return new JvmFlags(byService, Optional.of(cache));
    }

    /** {@return the options of {@code service}} (none when the file does not name it). */
    List<String> of(String service) {
        return byService.getOrDefault(service, List.of());
    }

    /** {@return the {@code env} line's variables}, for every JVM's environment. */
    Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String word : of("env")) {
            int eq = word.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("JVM flags file: env: '" + word + "' is not NAME=value");
            }
            env.put(word.substring(0, eq), word.substring(eq + 1));
        }
        return env;
    }

    /**
     * {@return {@code java}, the service's options, then {@code -jar jar} and {@code args}}; for a
     * service of the {@code appcds} line, the jar's extracted copy with its class archive (built
     * first, with a training run in {@code environment} with {@code args}, when the cache has none).
     */
    List<String> javaJar(String service, Path jar, Map<String, String> environment, String... args) {
        AppCds.Launch launch = appCds.filter(c -> of(APPCDS).contains(service))
                .map(c -> c.prepare(service, jar, of(service), environment, List.of(args)))
                .orElse(new AppCds.Launch(jar, List.of()));
        List<String> cmd = new java.util.ArrayList<>();
        cmd.add("java");
        cmd.addAll(of(service));
        cmd.addAll(launch.options());
        cmd.addAll(List.of("-jar", launch.jar().toString()));
        cmd.addAll(List.of(args));
        return List.copyOf(cmd);
    }

    static JvmFlags read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the JVM flags file " + file, e);
        }
        Map<String, List<String>> map = new LinkedHashMap<>();
        for (String line : lines) {
            int hash = line.indexOf('#');
            String[] words = (hash < 0 ? line : line.substring(0, hash)).trim().split("\\s+");
            if (words.length == 0 || words[0].isEmpty()) {
                continue;
            }
            if (map.put(words[0], List.of(Arrays.copyOfRange(words, 1, words.length))) != null) {
                throw new IllegalArgumentException(file + ": service " + words[0] + " is named twice");
            }
        }
        JvmFlags flags = new JvmFlags(map, Optional.empty());
        flags.environment();
        return flags;
    }
}
