package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A Kubernetes control plane on loopback: etcd, kube-apiserver, and (unless turned off)
 * kube-controller-manager and kube-scheduler, with generated certificates ({@link Pki}) and an
 * {@code admin.kubeconfig} (user {@code kubernetes-admin}, group {@code system:masters}).
 *
 * <p>{@link #start} returns once kube-apiserver answers {@code /readyz}, the controller
 * manager and scheduler answer {@code /healthz}, and (with the controller manager) the
 * {@code default} ServiceAccount exists: until it does, the API server refuses pods in
 * {@code default}. Starting on a directory whose parts all still
 * run adopts them and starts nothing ({@code ./calico up} twice); a part that died is started
 * again on its old ports and data. {@link #stop()} stops every part and keeps the directory;
 * {@link #attach} finds a control plane started by another process (to stop it or report on it).
 *
 * <p>There is no kubelet: Nodes and Pods are API objects. The node-lifecycle controller is off,
 * so Nodes without a kubelet are never tainted unreachable and their pods never evicted.
 */
public final class ControlPlane implements AutoCloseable {

    private static final Duration ETCD_START = Duration.ofSeconds(30);
    private static final Duration APISERVER_START = Duration.ofSeconds(90);
    private static final Duration CONTROLLER_START = Duration.ofSeconds(60);
    private static final Duration GRACE = Duration.ofSeconds(10);
    /** Starts on fresh free ports before a taken port is an error. */
    private static final int PORT_TRIES = 3;

    /** kube-controller-manager's controllers: all defaults but the node lifecycle (see the class comment). */
    static final String CONTROLLERS = "*,-node-lifecycle-controller";

    private final Settings settings;
    private final Binaries binaries;
    private final Settings.Ports ports;
    private final Pki pki;
    private final Part etcd;
    private final Part apiServer;
    private final Part controllerManager;
    private final Part scheduler;
    private final Probe probe;
    private final Kubectl kubectl;
    private final Thread stopOnExit = new Thread(this::stopQuietly, "control-plane-stop");

    private ControlPlane(Settings settings, Binaries binaries, Settings.Ports ports) {
        this.settings = settings;
        this.binaries = binaries;
        this.ports = ports;
        this.pki = Pki.create(settings.dir().resolve("pki"), settings.apiServiceIp());
        Path logs = settings.dir().resolve("logs");
        this.etcd = new Part("etcd", binaries.etcd(), etcdArgs(), logs.resolve("etcd.log"),
                URI.create("http://127.0.0.1:" + ports.etcdClient() + "/health"));
        this.apiServer = new Part("kube-apiserver", binaries.kubeApiserver(), apiServerArgs(), logs.resolve("kube-apiserver.log"),
                URI.create(apiServerUrl() + "/readyz"));
        this.controllerManager = new Part("kube-controller-manager", binaries.kubeControllerManager(), controllerManagerArgs(),
                logs.resolve("kube-controller-manager.log"), healthz(ports.controllerManager()));
        this.scheduler = new Part("kube-scheduler", binaries.kubeScheduler(), schedulerArgs(), logs.resolve("kube-scheduler.log"),
                healthz(ports.scheduler()));
        this.probe = new Probe(pki.caCert());
        this.kubectl = new Kubectl(binaries.kubectl(), settings.dir().resolve("kubectl-cache"));
    }

    /** Starts (or adopts) a control plane with the binaries of this checkout's pinned versions. */
    public static ControlPlane start(Settings settings) {
        return start(settings, Binaries.locate().requireAll());
    }

    public static ControlPlane start(Settings settings, Binaries binaries) {
        return start(settings, binaries, () -> choosePorts(Settings.Ports.free(), Optional.empty()));
    }

    /**
     * Starts on {@code settings}' ports, else those of the last start in the directory, else on
     * {@code freePorts}. A port is free when it is picked, but until its part binds it another
     * process may take it (a listener, or an outgoing connection's local port: the free ones come
     * from the same range); a part that then exits on "address already in use" is started again,
     * with all its siblings, on the next free ports. Ports given or kept from an earlier start are
     * the user's: a conflict on them is an error at once.
     */
    static ControlPlane start(Settings settings, Binaries binaries, Supplier<Settings.Ports> freePorts) {
        binaries.requireAll();
        try {
            Files.createDirectories(settings.dir());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + settings.dir(), e);
        }
        Optional<State> previous = State.read(settings.dir());
        boolean free = previous.isEmpty() && settings.ports().equals(Settings.Ports.free());
        for (int attempt = 1;; attempt++) {
            Settings.Ports ports = free ? freePorts.get() : choosePorts(settings.ports(), previous.map(State::ports));
            ControlPlane cp = new ControlPlane(settings, binaries, ports);
            previous.ifPresent(cp::adopt);
            if (!settings.detach()) {
                Runtime.getRuntime().addShutdownHook(cp.stopOnExit);
            }
            try {
                cp.startParts();
                return cp;
            } catch (Probe.PortTakenException e) {
                cp.closeQuietly();
                if (!free || attempt == PORT_TRIES) {
                    throw e;
                }
                System.err.println("control-plane: " + e.part() + "'s port was taken before it bound it; starting again on other ports");
            } catch (RuntimeException e) {
                cp.closeQuietly();
                throw e;
            }
        }
    }

    /** {@return the control plane started in {@code dir}} by any process, or empty if there is none. */
    public static Optional<ControlPlane> attach(Path dir, Binaries binaries) {
        Optional<State> state = State.read(dir.toAbsolutePath());
        if (state.isEmpty()) {
            return Optional.empty();
        }
        State st = state.get();
        Settings settings = new Settings(dir, null, st.ports(), st.controllerManager(), st.scheduler(), st.serviceCidr(), true,
                List.of());
        ControlPlane cp = new ControlPlane(settings, binaries, state.get().ports());
        cp.adopt(state.get());
        return Optional.of(cp);
    }

    private void adopt(State state) {
        for (Part p : parts()) {
            Long pid = state.pids().get(p.name());
            if (pid != null) {
                p.adopt(pid);
            }
        }
    }

    private void startParts() {
        startEtcd();
        startApiServer();
    }

    /**
     * Starts kube-apiserver if it is not running (after {@link #killApiServer()}) and waits for
     * {@code /readyz}; then starts the controller manager and scheduler where they are not running
     * (they exit when the API server goes away while they start) and waits for their {@code /healthz}.
     */
    public void startApiServer() {
        writeKubeconfigs();
        apiServer.start(settings.detach());
        saveState();
        probe.await(apiServer, APISERVER_START);
        List<Part> controllers = new ArrayList<>();
        if (settings.controllerManager()) {
            controllers.add(controllerManager);
        }
        if (settings.scheduler()) {
            controllers.add(scheduler);
        }
        for (Part p : controllers) {
            p.start(settings.detach());
        }
        saveState();
        for (Part p : controllers) {
            probe.await(p, CONTROLLER_START);
        }
        if (settings.controllerManager()) {
            // The service-account controller creates it soon after start; a pod created before is forbidden.
            kubectl("wait", "--for=create", "serviceaccount/default", "--namespace=default",
                    "--timeout=" + CONTROLLER_START.toSeconds() + "s");
        }
    }

    /** Kills kube-apiserver with SIGKILL, as a crash would; {@link #startApiServer()} brings it back. */
    public void killApiServer() {
        apiServer.kill();
        saveState();
    }

    /** Kills etcd with SIGKILL; {@link #startEtcd()} brings it back on the same data. */
    public void killEtcd() {
        etcd.kill();
        saveState();
    }

    /** Starts etcd if it is not running and waits until it is healthy. */
    public void startEtcd() {
        etcd.start(settings.detach());
        saveState();
        probe.await(etcd, ETCD_START);
    }

    /**
     * Compacts etcd's history up to its current revision, as kube-apiserver does every five
     * minutes, and {@return that revision}: watches from before it get 410 Gone once they read
     * etcd (at once with {@code --watch-cache=false}; else when the API server's watch cache no
     * longer holds the revision).
     */
    public long compactEtcd() {
        return new EtcdGateway(URI.create("http://127.0.0.1:" + ports.etcdClient())).compactToCurrent();
    }

    /** {@return whether every part that should run does}. */
    public boolean running() {
        return etcd.alive() && apiServer.alive() && (!settings.controllerManager() || controllerManager.alive())
                && (!settings.scheduler() || scheduler.alive());
    }

    /** {@return whether kube-apiserver answers {@code /readyz}}. */
    public boolean ready() {
        return probe.ok(apiServer.health());
    }

    public URI apiServerUrl() {
        return URI.create("https://127.0.0.1:" + ports.apiServer());
    }

    public Settings.Ports ports() {
        return ports;
    }

    public Path dir() {
        return settings.dir();
    }

    public Pki pki() {
        return pki;
    }

    public Binaries binaries() {
        return binaries;
    }

    /** {@return {@code DIR/admin.kubeconfig}}: user {@code kubernetes-admin} in {@code system:masters}. */
    public Path adminKubeconfig() {
        return settings.dir().resolve("admin.kubeconfig");
    }

    /**
     * {@return a kubeconfig for {@code user} in {@code groups}} (a client certificate of the
     * cluster CA), written once under {@code DIR/kubeconfigs/}.
     */
    public Path kubeconfig(String user, List<String> groups) {
        String file = user.replaceAll("[^A-Za-z0-9._-]", "_");
        Pki.Pair pair = pki.client("user-" + file, user, groups);
        Path dir = settings.dir().resolve("kubeconfigs");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        return new Kubeconfig(apiServerUrl(), pki.caCert(), pair, user).write(dir.resolve(file + ".kubeconfig"));
    }

    /** What a kubectl run printed (standard output and error together) and its exit code. */
    public record KubectlResult(int exitCode, String output) {
    }

    /** {@return kubectl's output} for {@code args} as the admin; fails with its output when it exits non-zero. */
    public String kubectl(String... args) {
        return kubectlWithInput(null, args);
    }

    /** As {@link #kubectl}, with {@code stdin} on kubectl's standard input (for {@code -f -}). */
    public String kubectlWithInput(String stdin, String... args) {
        KubectlResult r = kubectl.run(adminKubeconfig(), stdin, args);
        if (r.exitCode() != 0) {
            throw new IllegalStateException("kubectl " + String.join(" ", args) + " failed (exit " + r.exitCode() + "):\n"
                    + r.output());
        }
        return r.output();
    }

    /** Runs kubectl with another user's kubeconfig ({@link #kubeconfig}); {@return its result}, failed or not. */
    public KubectlResult kubectlAs(Path kubeconfig, String... args) {
        return kubectl.run(kubeconfig, null, args);
    }

    /**
     * Applies every manifest in {@code manifests} (a file or a directory) server-side, and waits
     * until each CustomResourceDefinition among them is established.
     */
    public void apply(Path manifests) {
        kubectl("apply", "--server-side", "--force-conflicts", "-f", manifests.toString());
        String crds = kubectl("get", "crd", "-o", "name");
        if (!crds.isBlank()) {
            kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all");
        }
    }

    /** {@return one line per part}: its pid (or {@code stopped}), port and log. */
    public Map<String, String> status() {
        Map<String, String> out = new LinkedHashMap<>();
        for (Part p : parts()) {
            out.put(p.name(), p.pid().map(pid -> "running, pid " + pid).orElse("stopped") + ", port " + p.health().getPort()
                    + ", log " + p.log());
        }
        return out;
    }

    /** Stops every part (the controllers first, etcd last) and keeps the directory. */
    public void stop() {
        scheduler.stop(GRACE);
        controllerManager.stop(GRACE);
        apiServer.stop(GRACE);
        etcd.stop(GRACE);
        saveState();
    }

    @Override
    public void close() {
        stop();
        forgetShutdownHook();
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (RuntimeException e) {
            System.err.println("control-plane: stopping " + settings.dir() + ": " + e.getMessage());
        }
    }

    /** After a failed start: stops what it started, and its shutdown hook is no longer needed. */
    private void closeQuietly() {
        stopQuietly();
        forgetShutdownHook();
    }

    private void forgetShutdownHook() {
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnExit);
        } catch (IllegalStateException | IllegalArgumentException e) {
            // shutting down already, or never registered (detached)
        }
    }

    private List<Part> parts() {
        return List.of(etcd, apiServer, controllerManager, scheduler);
    }


    private synchronized void saveState() {
        Map<String, Long> pids = new LinkedHashMap<>();
        for (Part p : parts()) {
            p.pid().ifPresent(pid -> pids.put(p.name(), pid));
        }
        new State(ports, settings.serviceCidr(), settings.controllerManager(), settings.scheduler(), pids)
                .write(settings.dir());
    }

    private void writeKubeconfigs() {
        Path dir = settings.dir();
        new Kubeconfig(apiServerUrl(), pki.caCert(), pki.client("admin", "kubernetes-admin", List.of("system:masters")),
                "kubernetes-admin").write(dir.resolve("admin.kubeconfig"));
        try {
            Files.createDirectories(dir.resolve("kubeconfigs"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir.resolve("kubeconfigs"), e);
        }
        new Kubeconfig(apiServerUrl(), pki.caCert(), pki.client("kube-controller-manager", "system:kube-controller-manager",
                List.of()), "system:kube-controller-manager").write(controllerManagerKubeconfig());
        new Kubeconfig(apiServerUrl(), pki.caCert(), pki.client("kube-scheduler", "system:kube-scheduler", List.of()),
                "system:kube-scheduler").write(schedulerKubeconfig());
    }

    private Path controllerManagerKubeconfig() {
        return settings.dir().resolve("kubeconfigs").resolve("kube-controller-manager.kubeconfig");
    }

    private Path schedulerKubeconfig() {
        return settings.dir().resolve("kubeconfigs").resolve("kube-scheduler.kubeconfig");
    }

    private static URI healthz(int port) {
        return URI.create("https://127.0.0.1:" + port + "/healthz");
    }

    private List<String> etcdArgs() {
        String client = "http://127.0.0.1:" + ports.etcdClient();
        String peer = "http://127.0.0.1:" + ports.etcdPeer();
        return List.of("--name", "control-plane", "--data-dir", settings.etcdData().toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "control-plane=" + peer,
                // A local control plane trades durability for speed: a lost machine loses it anyway.
                "--unsafe-no-fsync", "--log-level", "warn");
    }

    private List<String> apiServerArgs() {
        Pki.Pair serving = pki.apiServer();
        Pki.Pair proxy = pki.frontProxyClient();
        List<String> flags = new ArrayList<>(List.of(
                "--etcd-servers=http://127.0.0.1:" + ports.etcdClient(),
                "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=" + ports.apiServer(),
                "--tls-cert-file=" + serving.cert(), "--tls-private-key-file=" + serving.key(),
                "--client-ca-file=" + pki.caCert(),
                "--service-cluster-ip-range=" + settings.serviceCidr(),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + pki.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + pki.serviceAccountKey(),
                "--authorization-mode=Node,RBAC",
                // The aggregation layer: kube-apiserver proxies /apis/projectcalico.org to the
                // APIService with this client certificate and the user in these headers.
                "--requestheader-client-ca-file=" + pki.frontProxyCaCert(),
                "--requestheader-allowed-names=front-proxy-client",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                "--proxy-client-cert-file=" + proxy.cert(), "--proxy-client-key-file=" + proxy.key(),
                "--allow-privileged=true",
                // Endpoints may not hold a loopback address, so the kubernetes Service gets none.
                "--endpoint-reconciler-type=none",
                "--profiling=false"));
        flags.addAll(settings.apiServerFlags());
        return flags;
    }

    private List<String> controllerManagerArgs() {
        List<String> flags = controllerFlags(controllerManagerKubeconfig(), ports.controllerManager());
        flags.addAll(List.of("--client-ca-file=" + pki.caCert(),
                "--service-account-private-key-file=" + pki.serviceAccountKey(), "--root-ca-file=" + pki.caCert(),
                // As kubeadm: each controller acts as its own service account, which the bootstrap RBAC roles grant.
                "--use-service-account-credentials=true", "--controllers=" + CONTROLLERS));
        return flags;
    }

    private List<String> schedulerArgs() {
        return controllerFlags(schedulerKubeconfig(), ports.scheduler());
    }

    /** What the controller manager and the scheduler share: their identity, loopback serving, no leader election. */
    private List<String> controllerFlags(Path kubeconfig, int port) {
        Pki.Pair serving = pki.loopbackServing();
        return new ArrayList<>(List.of("--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
                "--authorization-kubeconfig=" + kubeconfig, "--bind-address=127.0.0.1", "--secure-port=" + port,
                "--tls-cert-file=" + serving.cert(), "--tls-private-key-file=" + serving.key(),
                "--leader-elect=false", "--profiling=false"));
    }

    /**
     * The given ports, else those of the last start in this directory, else free ones. The free
     * ones are held open until all five are chosen, so that no two parts get the same port (the
     * kernel may hand out a port again once its probe socket is closed).
     */
    static Settings.Ports choosePorts(Settings.Ports wanted, Optional<Settings.Ports> previous) {
        Settings.Ports p = previous.orElse(Settings.Ports.free());
        PortPicker picker = new PortPicker();
        try (picker) {
            return new Settings.Ports(picker.pick(wanted.etcdClient(), p.etcdClient()),
                    picker.pick(wanted.etcdPeer(), p.etcdPeer()), picker.pick(wanted.apiServer(), p.apiServer()),
                    picker.pick(wanted.controllerManager(), p.controllerManager()),
                    picker.pick(wanted.scheduler(), p.scheduler()));
        }
    }

    /** Picks ports for one start: each distinct from the others it picked. */
    private static final class PortPicker implements AutoCloseable {
        private final java.util.List<ServerSocket> held = new java.util.ArrayList<>();
        private final java.util.Set<Integer> taken = new java.util.HashSet<>();

        int pick(int wanted, int previous) {
            if (wanted != 0) {
                taken.add(wanted);
                return wanted; // the caller's choice, as given
            }
            int port = previous;
            while (port == 0 || !taken.add(port)) {
                port = holdFreePort();
            }
            return port;
        }

        private int holdFreePort() {
            try {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                return s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("no free loopback port", e);
            }
        }

        @Override
        public void close() {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException e) {
                    // a probe socket that does not close keeps its port from us alone
                }
            }
        }
    }
}
