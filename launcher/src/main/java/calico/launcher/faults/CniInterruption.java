package calico.launcher.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The CNI daemon killed in the middle of a call, as a kubelet would live through it: a pod
 * {@code shop/flt-cni} on the node; CNI ADD through the thin client with the daemon killed
 * {@link #KILL_AFTER_MILLIS} after the call began; once the daemon is back the kubelet's DEL (a failed
 * ADD is cleaned up) and a new ADD; then a DEL with the daemon killed again, repeated once it is back.
 * The pod goes, and {@code calicoctl ipam check} must count as many addresses in use as before and no
 * problem: an interrupted call leaks no address.
 */
final class CniInterruption {

    static final long KILL_AFTER_MILLIS = 150;
    private static final String NS = "shop", POD = "flt-cni";

    private final Cluster cluster;
    private final String node;
    private final FaultSuite.Killer killer;
    private final Consumer<String> verdicts;
    private final String service;
    private final Path nodeDir;
    private final String netns;
    private final String containerId = "fa017" + Long.toHexString(System.nanoTime());

    CniInterruption(Cluster cluster, String node, FaultSuite.Killer killer, Consumer<String> verdicts) {
        this.cluster = cluster;
        this.node = node;
        this.killer = killer;
        this.verdicts = verdicts;
        this.service = "cni-" + node;
        this.nodeDir = cluster.runDir().resolve("nodes").resolve(node);
        this.netns = cluster.prefix() + "pod-" + NS + "-" + POD;
    }

    List<FaultSuite.Window> run() {
        List<FaultSuite.Window> windows = new ArrayList<>();
        IpamCheck before = ipamCheck();
        createPod();
        try {
            Process[] add = new Process[1];
            windows.add(killer.kill(service, " (during ADD)", () -> add[0] = afterStart(cni("ADD")), true));
            Shell.Result interrupted = finish(add[0]);
            verdicts.accept("INFO: fault " + service + ": the interrupted ADD " + (interrupted.ok() ? "completed before the kill" : "failed: "
                    + interrupted.output().strip().replace('\n', ' ')));
            if (!interrupted.ok()) {
                expectOk("DEL after the failed ADD", finish(cni("DEL")));
            }
            Shell.Result again = finish(cni("ADD"));
            expectOk("ADD once the daemon is back", again);
            Process[] del = new Process[1];
            windows.add(killer.kill(service, " (during DEL)", () -> del[0] = afterStart(cni("DEL")), true));
            Shell.Result interruptedDel = finish(del[0]);
            verdicts.accept("INFO: fault " + service + ": the interrupted DEL " + (interruptedDel.ok() ? "completed before the kill"
                    : "failed: " + interruptedDel.output().strip().replace('\n', ' ')));
            expectOk("DEL repeated once the daemon is back", finish(cni("DEL")));
        } finally {
            deletePod();
        }
        IpamCheck after = ipamCheck();
        boolean same = after.inUse() == before.inUse() && after.problems() == 0;
        verdicts.accept((same ? "PASS" : "FAIL") + ": fault " + service + ": no address leaked by the interrupted ADD and DEL ("
                + "calicoctl ipam check: " + before.inUse() + " in use before, " + after.inUse() + " after, " + after.problems() + " problems)");
        return windows;
    }

    private void expectOk(String what, Shell.Result r) {
        if (!r.ok()) {
            verdicts.accept("FAIL: fault " + service + ": " + what + " failed: " + r.output().strip().replace('\n', ' '));
        }
    }

    private Process afterStart(Process p) {
        FaultSuite.pause(KILL_AFTER_MILLIS);
        return p;
    }

    /** Starts one CNI call through the thin client, as {@code ./calico}'s {@code cni} does. */
    private Process cni(String command) {
        ProcessBuilder pb = new ProcessBuilder(cluster.runDir().resolve("bin/calico-cni").toString()).redirectErrorStream(true)
                .redirectInput(nodeDir.resolve("10-calico.conf").toFile());
        pb.environment().clear();
        pb.environment().putAll(Map.of("PATH", System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
                "CALICO_CNI_SOCKET", nodeDir.resolve("cni.sock").toString(), "CNI_COMMAND", command,
                "CNI_CONTAINERID", containerId, "CNI_NETNS", "/run/netns/" + netns, "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni",
                "CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAMESPACE=" + NS + ";K8S_POD_NAME=" + POD + ";K8S_POD_INFRA_CONTAINER_ID=" + containerId));
        try {
            return pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run the CNI client", e);
        }
    }

    private static Shell.Result finish(Process p) {
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Shell.Result(-1, out + " (no answer in 60 s)");
            }
            return new Shell.Result(p.exitValue(), out);
        } catch (IOException e) {
            return new Shell.Result(-1, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private Shell.Result calico(String stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of(cluster.root().resolve("calico").toString()));
        cmd.addAll(List.of(args));
        return Shell.run(cmd, cluster.root(), null, stdin, 120);
    }

    private IpamCheck ipamCheck() {
        Shell.Result r = calico(null, "ctl", "ipam", "check");
        return IpamCheck.parse(r.output());
    }

    private void createPod() {
        String pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + POD + "\n  namespace: " + NS + "\n  labels: {app: flt-cni}\n"
                + "spec:\n  nodeName: " + node + "\n  containers:\n  - name: main\n    image: socat\n";
        Shell.Result r = calico(pod, "kubectl", "apply", "-f", "-");
        if (!r.ok()) {
            throw new IllegalStateException("cannot create the pod " + NS + "/" + POD + ": " + r.output());
        }
        try {
            // Recorded first, as ./calico records its namespaces: `down` deletes it should this run stop half-way.
            Files.createDirectories(cluster.runDir().resolve("netns"));
            Files.writeString(cluster.runDir().resolve("netns").resolve(netns), "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Shell.Result ns = Shell.run("ip", "netns", "add", netns);
        if (!ns.ok()) {
            throw new IllegalStateException("ip netns add " + netns + ": " + ns.output());
        }
        Shell.run("ip", "-n", netns, "link", "set", "lo", "up");
    }

    private void deletePod() {
        calico(null, "kubectl", "delete", "pod", POD, "-n", NS, "--grace-period=0", "--force", "--ignore-not-found");
        Shell.run("ip", "netns", "delete", netns);
        try {
            Files.deleteIfExists(cluster.runDir().resolve("netns").resolve(netns));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
