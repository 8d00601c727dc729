package calico.libcalico.ipam;

import calico.api.net.IpAddress;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Starts {@link IpamWorker} JVMs from the test classpath, releases them together, and collects what they allocated. */
final class WorkerProcesses {

    record Allocation(String handle, IpAddress address, long micros) {
    }

    record Outcome(String node, List<Allocation> allocations) {
    }

    private WorkerProcesses() {
    }

    /** One process per entry of {@code nodes} (a node may appear twice), {@code count} allocations each. */
    static List<Outcome> run(URI etcd, List<String> nodes, int count, Path logs) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<Process> procs = new ArrayList<>();
        try {
            for (int i = 0; i < nodes.size(); i++) {
                ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath,
                        IpamWorker.class.getName(), etcd.toString(), nodes.get(i), Integer.toString(count),
                        "k8s-pod-network.p" + i)
                        .redirectError(logs.resolve("worker-" + i + ".err").toFile());
                procs.add(pb.start());
            }
            List<BufferedReader> outs = new ArrayList<>();
            for (int i = 0; i < procs.size(); i++) {
                BufferedReader r = new BufferedReader(new InputStreamReader(procs.get(i).getInputStream(), StandardCharsets.UTF_8));
                String first = r.readLine();
                if (!"READY".equals(first)) {
                    throw new IllegalStateException("worker " + i + " did not start: " + first + "\n" + stderr(logs, i));
                }
                outs.add(r);
            }
            for (Process p : procs) { // all connected: release them together
                OutputStream in = p.getOutputStream();
                in.write("GO\n".getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            List<CompletableFuture<Outcome>> results = new ArrayList<>();
            for (int i = 0; i < procs.size(); i++) {
                int index = i;
                results.add(CompletableFuture.supplyAsync(() -> read(outs.get(index), nodes.get(index), logs, index)));
            }
            List<Outcome> out = new ArrayList<>();
            for (int i = 0; i < procs.size(); i++) {
                out.add(results.get(i).get(5, TimeUnit.MINUTES));
                if (!procs.get(i).waitFor(1, TimeUnit.MINUTES) || procs.get(i).exitValue() != 0) {
                    throw new IllegalStateException("worker " + i + " failed\n" + stderr(logs, i));
                }
            }
            return out;
        } finally {
            procs.forEach(Process::destroyForcibly);
        }
    }

    private static Outcome read(BufferedReader r, String node, Path logs, int index) {
        List<Allocation> got = new ArrayList<>();
        try {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.equals("DONE")) {
                    return new Outcome(node, got);
                }
                String[] f = line.split(" ");
                got.add(new Allocation(f[1], IpAddress.parse(f[2]), Long.parseLong(f[3])));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        throw new IllegalStateException("worker " + index + " ended without DONE\n" + stderr(logs, index));
    }

    private static String stderr(Path logs, int index) {
        try {
            return Files.readString(logs.resolve("worker-" + index + ".err"));
        } catch (IOException e) {
            return "(no stderr: " + e.getMessage() + ")";
        }
    }
}
