package calico.controlplane;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * {@code java -jar control-plane.jar start|stop|status DIR [OPTION...]}, which
 * {@code scripts/control-plane.sh} runs. {@code start} leaves the parts running in sessions of
 * their own and returns once kube-apiserver is ready; exit code 2 is a usage error.
 */
public final class Main {

    private static final String USAGE = """
            usage: control-plane start DIR [--apiserver-port N] [--etcd-port N] [--etcd-peer-port N]
                                           [--controller-manager-port N] [--scheduler-port N]
                                           [--service-cidr CIDR] [--crds DIR]
                                           [--no-controller-manager] [--no-scheduler]
                   control-plane stop DIR
                   control-plane status DIR
                   control-plane kubeconfig DIR USER [GROUP...]   (prints the path of USER's kubeconfig)
            Ports default to free ones (kept across restarts in DIR); DIR/admin.kubeconfig is the admin's.
            """;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.out, System.err));
    }

    static int run(List<String> args, PrintStream out, PrintStream err) {
        Deque<String> a = new ArrayDeque<>(args);
        String command = a.poll();
        String dir = a.poll();
        if (command == null || command.equals("help") || command.equals("--help")) {
            out.print(USAGE);
            return command == null ? 2 : 0;
        }
        if (dir == null) {
            err.print("control-plane: " + command + " needs DIR\n" + USAGE);
            return 2;
        }
        try {
            return switch (command) {
                case "start" -> start(Path.of(dir), a, out);
                case "stop" -> stop(Path.of(dir), a, out);
                case "status" -> status(Path.of(dir), a, out);
                case "kubeconfig" -> kubeconfig(Path.of(dir), a, out);
                default -> {
                    err.print("control-plane: unknown command " + command + "\n" + USAGE);
                    yield 2;
                }
            };
        } catch (IllegalArgumentException e) {
            err.println("control-plane: " + e.getMessage());
            return 2;
        } catch (RuntimeException e) {
            err.println("control-plane: " + command + " " + dir + " failed: " + e.getMessage());
            return 1;
        }
    }

    private static int start(Path dir, Deque<String> a, PrintStream out) {
        int etcd = 0, peer = 0, api = 0, kcm = 0, sched = 0;
        boolean withKcm = true, withScheduler = true;
        String serviceCidr = "10.96.0.0/16";
        Path crds = null;
        while (!a.isEmpty()) {
            String opt = a.poll();
            switch (opt) {
                case "--apiserver-port" -> api = port(opt, a.poll());
                case "--etcd-port" -> etcd = port(opt, a.poll());
                case "--etcd-peer-port" -> peer = port(opt, a.poll());
                case "--controller-manager-port" -> kcm = port(opt, a.poll());
                case "--scheduler-port" -> sched = port(opt, a.poll());
                case "--service-cidr" -> serviceCidr = value(opt, a.poll());
                case "--crds" -> crds = Path.of(value(opt, a.poll()));
                case "--no-controller-manager" -> withKcm = false;
                case "--no-scheduler" -> withScheduler = false;
                default -> throw new IllegalArgumentException("unknown option " + opt + "\n" + USAGE);
            }
        }
        Settings s = new Settings(dir, null, new Settings.Ports(etcd, peer, api, kcm, sched), withKcm, withScheduler,
                serviceCidr, true, List.of());
        ControlPlane cp = ControlPlane.start(s);
        if (crds != null) {
            cp.apply(crds);
        }
        out.println("control-plane: kube-apiserver ready at " + cp.apiServerUrl());
        out.println("control-plane: kubeconfig " + cp.adminKubeconfig());
        return 0;
    }

    private static int stop(Path dir, Deque<String> a, PrintStream out) {
        noMore(a);
        Optional<ControlPlane> cp = ControlPlane.attach(dir, Binaries.locate());
        cp.ifPresent(ControlPlane::stop);
        out.println(cp.isPresent() ? "control-plane: stopped " + dir.toAbsolutePath() : "control-plane: nothing started in " + dir);
        return 0;
    }

    private static int status(Path dir, Deque<String> a, PrintStream out) {
        noMore(a);
        Optional<ControlPlane> attached = ControlPlane.attach(dir, Binaries.locate());
        if (attached.isEmpty()) {
            out.println("control-plane: nothing started in " + dir);
            return 3;
        }
        ControlPlane cp = attached.get();
        cp.status().forEach((name, line) -> out.println(name + ": " + line));
        boolean ready = cp.ready();
        out.println("kube-apiserver /readyz: " + (ready ? "ok" : "not ready") + " at " + cp.apiServerUrl());
        return ready && cp.running() ? 0 : 3;
    }

    private static int kubeconfig(Path dir, Deque<String> a, PrintStream out) {
        String user = a.poll();
        if (user == null || user.isBlank()) {
            throw new IllegalArgumentException("kubeconfig needs USER");
        }
        ControlPlane cp = ControlPlane.attach(dir, Binaries.locate())
                .orElseThrow(() -> new IllegalArgumentException("nothing started in " + dir));
        out.println(cp.kubeconfig(user, List.copyOf(a)));
        return 0;
    }

    private static void noMore(Deque<String> a) {
        if (!a.isEmpty()) {
            throw new IllegalArgumentException("unexpected argument " + a.peek());
        }
    }

    private static String value(String opt, String v) {
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(opt + " needs a value");
        }
        return v;
    }

    private static int port(String opt, String v) {
        try {
            int p = Integer.parseInt(value(opt, v));
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException(opt + ": must be a port between 1 and 65535, got " + v);
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": must be a port between 1 and 65535, got " + v);
        }
    }
}
