package calico.charts;

import calico.charts.ImageArchive.Commands;
import calico.controlplane.ControlPlane;
import calico.dataplane.testing.LoopbackForward;
import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A real Kubernetes node on this machine, registered with a {@link ControlPlane}: containerd
 * (Debian's, with its own root, state and socket under the node's directory) and the kubelet of
 * the control plane's build, both inside
 * <ul>
 *   <li>a network namespace {@code node-<8 hex>} (the node's name too), joined to the machine by
 *       a veth pair {@code 10.253.N.1/30 ↔ eth0 10.253.N.2/30} (the node's address); the API
 *       server's loopback port is forwarded into it ({@link LoopbackForward}), and an nftables
 *       DNAT sends the {@code kubernetes} Service ({@code 10.96.0.1:443}) there, for the
 *       hostNetwork pods' in-cluster clients (there is no kube-proxy);</li>
 *   <li>a private mount namespace in which the host paths a node owns ({@code /var/lib/kubelet},
 *       {@code /run/calico}, {@code /etc/cni/net.d}, {@code /opt/cni/bin}, {@code /run/netns},
 *       ...) are bind mounts of scratch directories, so the node's pods never touch the
 *       machine's own; {@code /} is then made shared, as on a real host (the calico-node pod
 *       mounts {@code /run/netns} with {@code HostToContainer} propagation).</li>
 * </ul>
 * kubelet joins the namespaces with {@code nsenter} (under {@code ip netns exec}, which remounts
 * {@code /sys}, it finds no cgroup mounts). What this machine needs, found by a first run by
 * hand: containerd's {@code restrict_oom_score_adj} (root here lacks CAP_SYS_RESOURCE, so runc
 * cannot lower a sandbox's oom_score_adj), and on cgroup v1 kubelet's {@code failCgroupV1: false}
 * with {@code cgroupsPerQOS: false}. kubelet runs with {@code protectKernelDefaults}: it changes
 * no sysctl of the machine (it refuses to start, naming the flag, where they differ).
 *
 * <p>The node carries the taint {@value #TAINT_KEY}{@code :NoSchedule}: only pods that tolerate
 * it (calico-node, typha, a test's own pods) run here. {@link #close()} always undoes everything:
 * processes (kubelet, containers, shims, containerd), the mount and network namespaces, the
 * containers' cgroups and the scratch directories. What a test JVM killed first (SIGKILL: no
 * shutdown hook) leaves is ended by the next {@link NetNs} fixture's sweep: every process of the
 * node runs in its network namespace (containers' processes are the shims' children), which the
 * sweep deletes after killing what runs in it and their descendants.
 */
final class KubeletNode implements AutoCloseable {

    /** The test pods' image: {@code node-pod} (src/test/c/node-pod.c) alone, also the pod sandbox ("pause"). */
    static final String POD_IMAGE = "docker.io/calico-java/node-pod:test";
    static final String TAINT_KEY = "calico-java.test/node";
    static final String POD_BINARY_IN_IMAGE = "/node-pod";

    /** The host paths a node owns, each a bind mount of a scratch directory in the node's mount namespace. */
    private static final List<String> PRIVATE_PATHS = List.of("/var/lib/kubelet", "/var/log/pods", "/var/log/containers",
            "/run/calico", "/var/lib/calico", "/var/log/calico", "/run/nodeagent", "/etc/cni/net.d", "/opt/cni/bin",
            "/run/netns");
    /** Where Debian's containernetworking-plugins are: the node's /opt/cni/bin starts with them (portmap, loopback). */
    private static final Path STANDARD_CNI_PLUGINS = Path.of("/usr/lib/cni");
    private static final String SERVICE_IP = "10.96.0.1";

    private final ControlPlane controlPlane;
    private final Path dir;
    private final Deque<AutoCloseable> undo = new ArrayDeque<>();
    private final Thread hook = new Thread(this::close, "kubelet-node-cleanup");
    private NetNs ns;
    /** The node's address on eth0: its InternalIP, which calico-node's start-up autodetects. */
    private String address;
    private Process mountHolder;
    private Process containerd;
    private Process kubelet;
    private Path podBinary;
    private boolean closed;

    private KubeletNode(ControlPlane controlPlane, Path dir) {
        this.controlPlane = controlPlane;
        this.dir = dir;
    }

    /**
     * {@return a node running containerd and kubelet in {@code dir}}, registered with the
     * control plane (not Ready until a CNI configuration is installed: calico-node's install-cni
     * does that); on any failure, what was started is undone.
     */
    static KubeletNode start(ControlPlane controlPlane, Path dir) {
        KubeletNode node = new KubeletNode(controlPlane, dir);
        Runtime.getRuntime().addShutdownHook(node.hook);
        try {
            node.network();
            node.mounts();
            node.startContainerd();
            node.importPodImage();
            node.startKubelet();
            return node;
        } catch (RuntimeException | Error e) {
            node.close();
            throw e;
        }
    }

    String name() {
        return ns.name();
    }

    /** {@code node-pod} built for this machine: the same binary as in {@link #POD_IMAGE}. */
    Path podBinary() {
        return podBinary;
    }

    /**
     * Imports an OCI archive ({@code scripts/images.sh}'s) and tags it {@code docker.io/<reference>},
     * the normalized name under which the CRI looks up {@code reference}.
     */
    void importImage(Path archive, String reference) {
        ctr("images", "import", archive.toString());
        ctr("images", "tag", "--force", reference, "docker.io/" + reference);
    }

    /** Runs a command in the node's network namespace (as a process on the node); {@return its result}. */
    Commands.Result onNode(String... command) {
        List<String> full = new ArrayList<>(List.of("nsenter", "--net=/run/netns/" + ns.name()));
        full.addAll(List.of(command));
        return Commands.exec(full);
    }

    /**
     * Runs a command in the network namespace of the process whose command line holds
     * {@code tag} (a container's process: {@code node-pod pause TAG}); {@return its result}.
     */
    Commands.Result inPodOf(String tag, String... command) {
        long pid = ProcessHandle.allProcesses()
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(tag)).orElse(false))
                .mapToLong(ProcessHandle::pid).findFirst()
                .orElseThrow(() -> new AssertionError("no process with argument " + tag));
        List<String> full = new ArrayList<>(List.of("nsenter", "--net=/proc/" + pid + "/ns/net"));
        full.addAll(List.of(command));
        return Commands.exec(full);
    }

    // --- start-up steps ---

    private void network() {
        ns = NetNs.create("node");
        undo.push(ns);
        String hex = ns.name().substring(ns.name().length() - 8);
        int n = Integer.parseInt(hex.substring(0, 2), 16);
        String host = "10.253." + n + ".1";
        address = "10.253." + n + ".2";
        String hostLink = "nv" + hex;
        Commands.run(List.of("ip", "link", "add", hostLink, "type", "veth", "peer", "name", "eth0", "netns", ns.name()));
        Commands.run(List.of("ip", "addr", "add", host + "/30", "dev", hostLink));
        Commands.run(List.of("ip", "link", "set", hostLink, "up"));
        ns.exec("ip", "addr", "add", address + "/30", "dev", "eth0");
        ns.exec("ip", "link", "set", "eth0", "up");
        ns.exec("ip", "route", "add", "default", "via", host);
        int port = controlPlane.apiServerUrl().getPort();
        undo.push(LoopbackForward.into(ns, port));
        // The kubernetes Service for hostNetwork pods (kubelet gives them KUBERNETES_SERVICE_HOST=10.96.0.1).
        ns.exec("nft", "add table ip node_service");
        ns.exec("nft", "add chain ip node_service output { type nat hook output priority -100 ; }");
        ns.exec("nft", "add rule ip node_service output ip daddr " + SERVICE_IP + " tcp dport 443 dnat to 127.0.0.1:" + port);
    }

    private void mounts() {
        Set<Path> madeOnHost = new LinkedHashSet<>();
        for (String p : PRIVATE_PATHS) {
            Path target = Path.of(p);
            if (!Files.exists(target)) {
                // A mount point must exist on the machine: made empty here, removed again by close().
                for (Path q = target; q != null && !Files.exists(q); q = q.getParent()) {
                    madeOnHost.add(q);
                }
                createDirectories(target);
            }
        }
        undo.push(() -> madeOnHost.forEach(KubeletNode::removeIfEmpty));
        // In the node's network namespace as everything of the node is: a test JVM killed before close() leaves
        // them all to the next fixture's sweep, which ends the processes in a dead owner's namespace and theirs.
        mountHolder = startProcess("mount-holder", "nsenter", "--net=/run/netns/" + ns.name(), "unshare", "--mount",
                "--propagation", "private", "sleep", "infinity");
        // Until unshare(2) has run, the holder is still in the machine's mount namespace: a bind
        // mount entered there would land on the machine itself.
        Path own = mountNamespace(ProcessHandle.current().pid());
        Await.until("the node's mount namespace made", Duration.ofSeconds(30), () -> {
            requireAlive(mountHolder, "mount-holder");
            Path holder = mountNamespace(mountHolder.pid());
            return holder != null && !holder.equals(own);
        });
        Path scratch = dir.resolve("host");
        for (String p : PRIVATE_PATHS) {
            Path source = scratch.resolve(p.substring(1));
            createDirectories(source);
            inMounts("mount", "--bind", source.toString(), p);
        }
        inMounts("mount", "--make-rshared", "/");
        try (var plugins = Files.list(STANDARD_CNI_PLUGINS)) {
            for (Path plugin : plugins.toList()) {
                Files.copy(plugin, scratch.resolve("opt/cni/bin").resolve(plugin.getFileName()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("copying " + STANDARD_CNI_PLUGINS, e);
        }
    }

    private void startContainerd() {
        // containerd's CRI puts each container's cgroup under /k8s.io/ in every hierarchy: the
        // parents it makes on this machine are removed again by close(), once empty.
        Set<Path> parents = containerCgroupParents();
        undo.push(() -> containerCgroupParents().stream().filter(p -> !parents.contains(p)).forEach(KubeletNode::removeCgroup));
        Path root = dir.resolve("containerd");
        Path config = dir.resolve("containerd.toml");
        write(config, """
                version = 2
                root = "%1$s/root"
                state = "%1$s/state"
                [grpc]
                  address = "%2$s"
                [ttrpc]
                  address = "%2$s.ttrpc"
                [plugins."io.containerd.internal.v1.opt"]
                  path = "%1$s/opt"
                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%3$s"
                  # root here lacks CAP_SYS_RESOURCE: runc cannot lower a sandbox's oom_score_adj below ours
                  restrict_oom_score_adj = true
                  [plugins."io.containerd.grpc.v1.cri".cni]
                    bin_dir = "/opt/cni/bin"
                    conf_dir = "/etc/cni/net.d"
                """.formatted(root, socket(), POD_IMAGE));
        containerd = startProcess("containerd", nodeCommand("containerd", "--config", config.toString()));
        Await.until("containerd answers on " + socket(), Duration.ofSeconds(60), () -> {
            requireAlive(containerd, "containerd");
            return Commands.exec(ctrCommand("version")).exit() == 0;
        });
    }

    /** {@link #POD_IMAGE}: an OCI layout of one uncompressed layer holding node-pod, written and imported. */
    private void importPodImage() {
        Path image = dir.resolve("pod-image");
        Path rootFs = image.resolve("rootfs");
        createDirectories(rootFs);
        podBinary = rootFs.resolve(POD_BINARY_IN_IMAGE.substring(1));
        Commands.run(List.of("cc", "-static", "-O2", "-o", podBinary.toString(),
                Helm.ROOT.resolve("charts/src/test/c/node-pod.c").toString()));
        Path layout = image.resolve("layout");
        Path blobs = layout.resolve("blobs/sha256");
        createDirectories(blobs);
        Path layer = image.resolve("layer.tar");
        Commands.run(List.of("tar", "--numeric-owner", "--owner=0", "--group=0", "-C", rootFs.toString(), "-cf",
                layer.toString(), POD_BINARY_IN_IMAGE.substring(1)));
        String layerDigest = blob(blobs, layer);
        long layerSize = size(layer);
        String config = """
                {"architecture":"amd64","os":"linux","config":{"Entrypoint":["%s","pause"]},\
                "rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}""".formatted(POD_BINARY_IN_IMAGE, layerDigest);
        Path configFile = image.resolve("config.json");
        write(configFile, config);
        String manifest = """
                {"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",\
                "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},\
                "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}"""
                .formatted(blob(blobs, configFile), size(configFile), layerDigest, layerSize);
        Path manifestFile = image.resolve("manifest.json");
        write(manifestFile, manifest);
        write(layout.resolve("oci-layout"), "{\"imageLayoutVersion\":\"1.0.0\"}");
        write(layout.resolve("index.json"), """
                {"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json",\
                "digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s",\
                "org.opencontainers.image.ref.name":"test"}}]}""".formatted(blob(blobs, manifestFile), size(manifestFile),
                POD_IMAGE));
        Path archive = image.resolve("node-pod.tar");
        Commands.run(List.of("tar", "-C", layout.toString(), "-cf", archive.toString(), "."));
        ctr("images", "import", archive.toString());
    }

    private void startKubelet() {
        String name = ns.name();
        Path kubeconfig = controlPlane.kubeconfig("system:node:" + name, List.of("system:nodes"));
        Path config = dir.resolve("kubelet.yaml");
        write(config, """
                apiVersion: kubelet.config.k8s.io/v1beta1
                kind: KubeletConfiguration
                containerRuntimeEndpoint: unix://%s
                # cgroup v1 without systemd (this machine): cgroupfs, no QoS hierarchy, nothing reserved
                failCgroupV1: false
                cgroupDriver: cgroupfs
                cgroupsPerQOS: false
                enforceNodeAllocatable: []
                # never change the machine's sysctls (kubelet refuses to start where they differ)
                protectKernelDefaults: true
                failSwapOn: false
                authentication:
                  anonymous: {enabled: false}
                  webhook: {enabled: false}
                  x509: {clientCAFile: %s}
                authorization: {mode: AlwaysAllow}
                readOnlyPort: 0
                registerWithTaints:
                  - {key: %s, value: "true", effect: NoSchedule}
                # a shared build machine's disk and memory are not this node's to guard: no eviction
                evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
                imageGCHighThresholdPercent: 100
                imageGCLowThresholdPercent: 99
                localStorageCapacityIsolation: false
                serializeImagePulls: false
                """.formatted(socket(), controlPlane.pki().caCert(), TAINT_KEY));
        kubelet = startProcess("kubelet", nodeCommand(controlPlane.binaries().kubelet().toString(),
                "--config=" + config, "--kubeconfig=" + kubeconfig, "--hostname-override=" + name,
                "--node-ip=" + address, "--root-dir=/var/lib/kubelet", "--v=1"));
        Await.until("Node " + name + " registered", Duration.ofSeconds(120), () -> {
            requireAlive(kubelet, "kubelet");
            return controlPlane.kubectlAs(controlPlane.adminKubeconfig(), "get", "node", name, "-o", "name").exitCode() == 0;
        });
    }

    // --- clean-up ---

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException ignored) {
            // shutting down: this is the hook
        }
        stop(kubelet);
        Set<Path> cgroups = stopContainers();
        stop(containerd);
        killShims();
        stop(mountHolder);
        cgroups.forEach(KubeletNode::removeCgroup);
        while (!undo.isEmpty()) {
            try {
                undo.pop().close();
            } catch (Exception e) {
                System.err.println("KubeletNode: clean-up step failed: " + e);
            }
        }
        deleteTree(dir.resolve("host"));
        deleteTree(dir.resolve("containerd"));
    }

    /** Kills every container's processes and deletes the tasks; {@return the cgroups they were in}. */
    private Set<Path> stopContainers() {
        Set<Path> cgroups = new LinkedHashSet<>();
        if (containerd == null || !containerd.isAlive()) {
            return cgroups;
        }
        Commands.Result tasks = Commands.exec(ctrCommand("tasks", "ls"));
        for (String line : tasks.output().lines().skip(1).toList()) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 2) {
                continue;
            }
            cgroups.addAll(cgroupsOf(f[1]));
            Commands.exec(ctrCommand("tasks", "kill", "--all", "--signal", "SIGKILL", f[0]));
        }
        for (String line : tasks.output().lines().skip(1).toList()) {
            String id = line.trim().split("\\s+")[0];
            if (!id.isEmpty()) {
                try {
                    Await.until("task " + id + " deleted", Duration.ofSeconds(20),
                            () -> Commands.exec(ctrCommand("tasks", "delete", id)).exit() == 0
                                    || !Commands.exec(ctrCommand("tasks", "ls", "-q")).output().contains(id));
                } catch (AssertionError | RuntimeException e) {
                    System.err.println("KubeletNode: " + e.getMessage());
                }
            }
        }
        return cgroups;
    }

    /** Shims outlive containerd by design; ours are those started with our socket. */
    private void killShims() {
        String address = socket().toString();
        ProcessHandle.allProcesses()
                .filter(p -> p.info().command().map(c -> c.contains("containerd-shim")).orElse(false))
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(address)).orElse(false))
                .forEach(p -> {
                    p.destroyForcibly();
                    p.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> p).join();
                });
    }

    private static Set<Path> cgroupsOf(String pid) {
        Set<Path> dirs = new LinkedHashSet<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc", pid, "cgroup"))) {
                String[] f = line.split(":", 3);
                if (f.length == 3 && !f[2].equals("/")) {
                    // v1: one hierarchy per line, mounted under each of its controllers' names; v2: "0::"
                    for (String controller : (f[1].isEmpty() ? "unified" : f[1].replace("name=", "")).split(",")) {
                        dirs.add(Path.of("/sys/fs/cgroup", controller, f[2].substring(1)));
                    }
                }
            }
        } catch (IOException e) {
            // gone already
        }
        return dirs;
    }

    private static Path mountNamespace(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc/" + pid + "/ns/mnt"));
        } catch (IOException e) {
            return null;
        }
    }

    private static Set<Path> containerCgroupParents() {
        Set<Path> parents = new LinkedHashSet<>();
        try (var hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
            hierarchies.map(h -> h.resolve("k8s.io")).filter(Files::isDirectory).forEach(parents::add);
        } catch (IOException e) {
            // no cgroup file system: nothing to remove either
        }
        return parents;
    }

    private static void removeCgroup(Path cgroup) {
        if (Files.isDirectory(cgroup)) {
            try {
                Files.deleteIfExists(cgroup);
            } catch (IOException e) {
                System.err.println("KubeletNode: cgroup " + cgroup + " left: " + e);
            }
        }
    }

    // --- helpers ---

    private Path socket() {
        return dir.resolve("containerd.sock");
    }

    private void ctr(String... args) {
        Commands.run(ctrCommand(args));
    }

    private List<String> ctrCommand(String... args) {
        List<String> command = new ArrayList<>(List.of("ctr", "--address", socket().toString(), "--namespace", "k8s.io"));
        command.addAll(List.of(args));
        return command;
    }

    /** {@code command} in the node's mount and network namespaces. */
    private List<String> nodeCommand(String... command) {
        List<String> full = new ArrayList<>(List.of("nsenter", "--mount=/proc/" + mountHolder.pid() + "/ns/mnt",
                "--net=/run/netns/" + ns.name()));
        full.addAll(List.of(command));
        return full;
    }

    private void inMounts(String... command) {
        List<String> full = new ArrayList<>(List.of("nsenter", "--mount=/proc/" + mountHolder.pid() + "/ns/mnt"));
        full.addAll(List.of(command));
        Commands.run(full);
    }

    private Process startProcess(String name, String... command) {
        return startProcess(name, List.of(command));
    }

    private Process startProcess(String name, List<String> command) {
        try {
            Path log = dir.resolve(name + ".log");
            return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("starting " + command, e);
        }
    }

    private void requireAlive(Process p, String name) {
        if (!p.isAlive()) {
            throw new IllegalStateException(name + " exited " + p.exitValue() + "; its log: "
                    + tail(dir.resolve(name + ".log")));
        }
    }

    /** {@return the last lines of a log} (for failure messages). */
    private String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** {@return the log of kubelet or containerd} (for failure messages). */
    String log(String name) {
        return tail(dir.resolve(name + ".log"));
    }

    private static void stop(Process p) {
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
    }

    private static String blob(Path blobs, Path file) {
        String digest = ImageArchive.sha256(file, false).substring("sha256:".length());
        try {
            Files.copy(file, blobs.resolve(digest), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return digest;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path file, String content) {
        try {
            Files.writeString(file, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void createDirectories(Path p) {
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void removeIfEmpty(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // not empty (something else uses it now) or busy: left
        }
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        Commands.exec(List.of("rm", "-rf", "--one-file-system", root.toString()));
    }
}
