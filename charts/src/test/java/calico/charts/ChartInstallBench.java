package calico.charts;

import calico.controlplane.ControlPlane;
import calico.controlplane.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Times {@code helm template}, {@code helm install} (every object created: helm returns once the
 * API server has stored each) and {@code helm uninstall} of the default chart on a real control
 * plane started for the run. {@code bench/run.sh charts calico.charts.ChartInstallBench [RUNS]}.
 */
public final class ChartInstallBench {

    private ChartInstallBench() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        Path dir = Files.createTempDirectory("chart-bench-");
        try (ControlPlane cp = ControlPlane.start(Settings.in(dir))) {
            String kubeconfig = cp.adminKubeconfig().toString();
            List<Long> template = new ArrayList<>();
            List<Long> install = new ArrayList<>();
            List<Long> uninstall = new ArrayList<>();
            int objects = 0;
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                String manifests = Helm.template().ok().stdout();
                long t1 = System.nanoTime();
                Helm.run("install", "calico", Helm.CHART.toString(), "--kubeconfig", kubeconfig,
                        "--namespace", "calico-system", "--create-namespace").ok();
                long t2 = System.nanoTime();
                Helm.run("uninstall", "calico", "--kubeconfig", kubeconfig, "--namespace", "calico-system").ok();
                long t3 = System.nanoTime();
                objects = Rendered.parse(manifests).objects().size();
                template.add((t1 - t0) / 1_000_000);
                install.add((t2 - t1) / 1_000_000);
                uninstall.add((t3 - t2) / 1_000_000);
            }
            long crds;
            try (var files = Files.list(Helm.CHART.resolve("crds"))) {
                crds = files.count();
            }
            System.out.printf("objects rendered: %d (plus %d CRDs on the first install)%n", objects, crds);
            report("helm template", template);
            report("helm install (first run installs the CRDs)", install);
            report("helm uninstall", uninstall);
        } finally {
            try (var paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Collections.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static void report(String what, List<Long> ms) {
        List<Long> sorted = new ArrayList<>(ms);
        Collections.sort(sorted);
        System.out.printf("%-45s runs %s ms; median %d ms%n", what, ms, sorted.get(sorted.size() / 2));
    }
}
