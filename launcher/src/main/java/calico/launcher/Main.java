package calico.launcher;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;

import calico.launcher.faults.FaultSuite;

/**
 * {@code java -jar launcher.jar startup|up|down|status|info [OPTION...]}, which {@code ./calico}
 * runs. Exit 0 on success, 1 on failure (the reason on stderr), 2 on a usage error, 3 when
 * {@code status} finds something stopped or unready.
 */
public final class Main {

    private static final String USAGE = """
            usage: launcher startup|up|down|status|info|faults --run-dir DIR [OPTION...]
              startup   create the underlay and node namespaces (what is missing), run calico-node's start-up per node
              up        start each node's felix, CNI daemon, confd and BIRD that do not run; wait until all are ready
              down      stop every node's services, delete the namespaces recorded under DIR/netns
              status    one line per node service and node; exit 3 if any is stopped or unready
              info      how to reach each node's services
              faults    the fault suite against a running `./calico up`: SIGKILL each service under probes, restart it,
                        PASS/FAIL lines and a table of figures (calico.launcher.faults)
              probe     (the fault suite's prober, run inside a pod's namespace)
              await-ready NAME --pid PID --port N [--path /readiness] [--cpu SECONDS (90)] [--wall SECONDS (600)]
                        returns once http://127.0.0.1:N/PATH answers 200; fails at once if PID exits, or once PID has
                        used --cpu of its own CPU time (load-proof: a starved JVM uses little) or --wall has passed
              java-command [--root DIR] [--jvm-flags FILE] SERVICE JAR [ARG...]
                        prints, one word a line, the command that starts SERVICE's JAR as the flags file says
                        (its options; for a service of its appcds line the class archive, built first if missing)
            options: --root DIR (the repository, default .)  --nodes N (2)  --prefix P (calico-)
                     --underlay A.B.C (172.31.255: node i is A.B.C.i/24, the gateway .254)
                     --encapsulation none|vxlan|ipip (none)  --wireguard  --dataplane nftables|iptables
                     --typha HOST:PORT  --goldmane HOST:PORT  --kubeconfig FILE  --pool-cidr CIDR (192.168.0.0/16)
                     --felix-health-port N (9099)  --felix-admin-port N (9097)  --felix-metrics-port N (9091)
                     --confd-health-port N (9086)  --confd-admin-port N (9085)  --cni-http-port N (9088)
                     --port-stride N (100: node i's ports are node 1's + (i-1)*N)
                     --jvm-flags FILE (each JVM's options, one line per service; default ROOT/scripts/lib/jvm-flags.conf)
            The datastore's variables (DATASTORE_TYPE, ETCD_ENDPOINTS, KUBECONFIG, CALICO_APISERVER_*) come
            from the environment and pass to every node's process.
            """;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.out, System.err));
    }

    static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
        Deque<String> a = new ArrayDeque<>(args);
        String command = a.poll();
        if (command == null || command.equals("help") || command.equals("--help")) {
            out.print(USAGE);
            return command == null ? 2 : 0;
        }
        if (command.equals("probe")) {
            return FaultSuite.probe(List.copyOf(a), out, err);
        }
        if (command.equals("java-command")) {
            return javaCommand(a, out, err);
        }
        if (command.equals("await-ready")) {
            return awaitReady(a, out, err);
        }
        Settings settings;
        try {
            if (!List.of("startup", "up", "down", "status", "info", "faults").contains(command)) {
                throw new IllegalArgumentException("unknown command " + command);
            }
            settings = parse(a);
        } catch (IllegalArgumentException e) {
            err.print("launcher: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        Nodes nodes = new Nodes(settings, env, out);
        try {
            switch (command) {
                case "startup" -> nodes.startup();
                case "up" -> nodes.up();
                case "down" -> nodes.down();
                case "info" -> nodes.info();
                case "faults" -> {
                    return FaultSuite.faults(new RunningCluster(settings, env), out);
                }
                default -> {
                    return nodes.status() ? 0 : 3;
                }
            }
            return 0;
        } catch (RuntimeException e) {
            err.println("launcher: " + command + " failed: " + e.getMessage());
            return 1;
        }
    }

    static Settings parse(Deque<String> a) {
        Path runDir = null;
        Path root = Path.of(".");
        Path kubeconfig = null;
        Path jvmFlags = null;
        String prefix = "calico-";
        String underlay = Topology.Underlay.DEFAULT.base();
        String dataplane = "nftables";
        String typha = "127.0.0.1:5473";
        String goldmane = "127.0.0.1:7443";
        String pool = "192.168.0.0/16";
        int nodes = 2;
        boolean wireguard = false;
        Encapsulation encapsulation = Encapsulation.NONE;
        Ports d = Ports.DEFAULT;
        int felixHealth = d.felixHealth(), felixAdmin = d.felixAdmin(), felixMetrics = d.felixMetrics();
        int confdHealth = d.confdHealth(), confdAdmin = d.confdAdmin(), cniHttp = d.cniHttp(), stride = d.stride();
        while (!a.isEmpty()) {
            String opt = a.poll();
            switch (opt) {
                case "--run-dir" -> runDir = Path.of(value(opt, a.poll()));
                case "--root" -> root = Path.of(value(opt, a.poll()));
                case "--nodes" -> nodes = number(opt, a.poll());
                case "--prefix" -> prefix = value(opt, a.poll());
                case "--underlay" -> underlay = value(opt, a.poll());
                case "--encapsulation" -> encapsulation = Encapsulation.parse(value(opt, a.poll()));
                case "--wireguard" -> wireguard = true;
                case "--dataplane" -> dataplane = value(opt, a.poll());
                case "--typha" -> typha = value(opt, a.poll());
                case "--goldmane" -> goldmane = value(opt, a.poll());
                case "--kubeconfig" -> kubeconfig = Path.of(value(opt, a.poll()));
                case "--pool-cidr" -> pool = value(opt, a.poll());
                case "--felix-health-port" -> felixHealth = number(opt, a.poll());
                case "--felix-admin-port" -> felixAdmin = number(opt, a.poll());
                case "--felix-metrics-port" -> felixMetrics = number(opt, a.poll());
                case "--confd-health-port" -> confdHealth = number(opt, a.poll());
                case "--confd-admin-port" -> confdAdmin = number(opt, a.poll());
                case "--cni-http-port" -> cniHttp = number(opt, a.poll());
                case "--port-stride" -> stride = number(opt, a.poll());
                case "--jvm-flags" -> jvmFlags = Path.of(value(opt, a.poll()));
                default -> throw new IllegalArgumentException("unknown option " + opt);
            }
        }
        if (runDir == null) {
            throw new IllegalArgumentException("--run-dir is required");
        }
        Path repository = root.toAbsolutePath().normalize();
        JvmFlags flags = jvmFlags(repository, jvmFlags);
        return new Settings(runDir.toAbsolutePath(), repository, prefix, nodes,
                new Topology.Underlay(underlay, 24), encapsulation, wireguard, dataplane, kubeconfig, typha, goldmane,
                new Ports(felixHealth, felixAdmin, felixMetrics, confdHealth, confdAdmin, cniHttp, stride), pool, flags);
    }

    /** {@code await-ready NAME --pid PID --port N [--path P] [--cpu S] [--wall S]}: exit 0 once ready, 1 otherwise. */
    static int awaitReady(Deque<String> a, PrintStream out, PrintStream err) {
        String name;
        long pid = -1;
        int port = -1;
        String path = "/readiness";
        ReadinessWait.Budget budget;
        try {
            name = value("await-ready NAME", a.poll());
            long cpu = ReadinessWait.Budget.DEFAULT.cpu().toSeconds();
            long wall = ReadinessWait.Budget.DEFAULT.wall().toSeconds();
            while (!a.isEmpty()) {
                String opt = a.poll();
                switch (opt) {
                    case "--pid" -> pid = number(opt, a.poll());
                    case "--port" -> port = number(opt, a.poll());
                    case "--path" -> path = value(opt, a.poll());
                    case "--cpu" -> cpu = number(opt, a.poll());
                    case "--wall" -> wall = number(opt, a.poll());
                    default -> throw new IllegalArgumentException("await-ready: unknown option " + opt);
                }
            }
            if (pid <= 0) {
                throw new IllegalArgumentException("await-ready --pid: required, a positive process id");
            }
            if (port <= 0 || port > 65535) {
                throw new IllegalArgumentException("await-ready --port: required, between 1 and 65535");
            }
            budget = new ReadinessWait.Budget(Duration.ofSeconds(cpu), Duration.ofSeconds(wall));
        } catch (IllegalArgumentException e) {
            err.print("launcher: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        int p = port;
        String readiness = path;
        ReadinessWait.Outcome outcome = ReadinessWait.await(ReadinessWait.Watched.pid(pid), () -> NodeServices.http(p, readiness),
                budget);
        (outcome instanceof ReadinessWait.Ready ? out : err).println(name + " " + outcome.describe());
        return outcome instanceof ReadinessWait.Ready ? 0 : 1;
    }

    /** {@code java-command}: {@code [--root DIR] [--jvm-flags FILE] SERVICE JAR [ARG...]}. */
    private static int javaCommand(Deque<String> a, PrintStream out, PrintStream err) {
        List<String> command;
        try {
            Path root = Path.of(".");
            Path file = null;
            while (!a.isEmpty() && a.peek().startsWith("--")) {
                String opt = a.poll();
                switch (opt) {
                    case "--root" -> root = Path.of(value(opt, a.poll()));
                    case "--jvm-flags" -> file = Path.of(value(opt, a.poll()));
                    default -> throw new IllegalArgumentException("java-command: unknown option " + opt);
                }
            }
            if (a.size() < 2) {
                throw new IllegalArgumentException("java-command needs SERVICE and JAR");
            }
            String service = a.poll();
            Path jar = Path.of(a.poll()).toAbsolutePath();
            JvmFlags flags = jvmFlags(root.toAbsolutePath().normalize(), file);
            command = flags.javaJar(service, jar, flags.environment(), a.toArray(String[]::new));
        } catch (IllegalArgumentException e) {
            err.print("launcher: " + e.getMessage() + "\n" + USAGE);
            return 2;
        }
        command.forEach(out::println);
        return 0;
    }

    /** The flags file ({@code --jvm-flags}, else the repository's if it has one), archives cached under the repository. */
    private static JvmFlags jvmFlags(Path repository, Path file) {
        if (file != null && !Files.isRegularFile(file)) {
            throw new IllegalArgumentException("--jvm-flags: no file " + file);
        }
        Path defaultFlags = repository.resolve("scripts/lib/jvm-flags.conf");
        JvmFlags flags = file != null ? JvmFlags.read(file)
                : Files.isRegularFile(defaultFlags) ? JvmFlags.read(defaultFlags) : JvmFlags.NONE;
        // A training run may take minutes on a loaded machine; past this it is abandoned (and retried next start).
        return flags.withAppCds(new AppCds(repository.resolve(".calico-cache/appcds"), Duration.ofMinutes(5), System.err));
    }

    private static String value(String opt, String v) {
        if (v == null || v.isBlank() || v.startsWith("--")) {
            throw new IllegalArgumentException(opt + " needs a value");
        }
        return v;
    }

    private static int number(String opt, String v) {
        try {
            return Integer.parseInt(value(opt, v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": '" + v + "' is not a number");
        }
    }
}
