package calico.charts;

import calico.controlplane.Repository;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The pinned helm (scripts/helm.sh, built from its Go module on first use) run as a process. */
final class Helm {

    /** One helm run: its exit status and what it wrote. */
    record Result(int exit, String stdout, String stderr) {
        Result ok() {
            if (exit != 0) {
                throw new AssertionError("helm exited " + exit + ": " + stderr + stdout);
            }
            return this;
        }
    }

    static final Path ROOT = Repository.root();
    static final Path CHART = ROOT.resolve("charts/calico");

    private Helm() {
    }

    static Result run(String... args) {
        List<String> command = new ArrayList<>();
        command.add(ROOT.resolve("scripts/helm.sh").toString());
        command.addAll(List.of(args));
        try {
            Path home = Files.createTempDirectory("calico-helm-home");
            ProcessBuilder pb = new ProcessBuilder(command).directory(ROOT.toFile());
            // No state from the machine's own helm configuration, and none left behind.
            pb.environment().put("HELM_CONFIG_HOME", home.resolve("config").toString());
            pb.environment().put("HELM_CACHE_HOME", home.resolve("cache").toString());
            pb.environment().put("HELM_DATA_HOME", home.resolve("data").toString());
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            if (!p.waitFor(15, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new AssertionError("helm " + String.join(" ", args) + ": no answer in 15 minutes");
            }
            Result r = new Result(p.exitValue(), out.join(), err.join());
            deleteTree(home);
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** {@code helm template} of the chart with {@code --set} values; the release is in calico-system. */
    static Result template(String... sets) {
        return template(null, "calico-system", sets);
    }

    /** {@code helm template} in {@code namespace} with a values file (or null) and {@code --set} values. */
    static Result template(Path valuesFile, String namespace, String... sets) {
        List<String> args = new ArrayList<>(List.of("template", "calico", CHART.toString(), "--namespace", namespace));
        if (valuesFile != null) {
            args.add("--values");
            args.add(valuesFile.toString());
        }
        for (String s : sets) {
            args.add("--set");
            args.add(s);
        }
        return run(args.toArray(String[]::new));
    }

    /** {@return the chart's variant values files (charts/calico/ci/*.yaml)}, by name */
    static List<Path> variantFiles() {
        try (var files = Files.list(CHART.resolve("ci"))) {
            List<Path> all = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
            if (all.isEmpty()) {
                throw new AssertionError("no values files in " + CHART.resolve("ci"));
            }
            return all;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(java.io.InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
