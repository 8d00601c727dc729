package calico.controlplane;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * What a started control plane left in its directory ({@code control-plane.state}) so that
 * another launcher can stop it, report on it, or find it already running: the ports chosen and
 * which parts it runs, and the pid of each running part.
 */
record State(Settings.Ports ports, String serviceCidr, boolean controllerManager, boolean scheduler, Map<String, Long> pids) {

    static final String FILE = "control-plane.state";

    State {
        pids = Map.copyOf(pids);
    }

    static Optional<State> read(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        try {
            Settings.Ports ports = new Settings.Ports(intOf(p, "port.etcd-client"), intOf(p, "port.etcd-peer"),
                    intOf(p, "port.kube-apiserver"), intOf(p, "port.kube-controller-manager"), intOf(p, "port.kube-scheduler"));
            Map<String, Long> pids = new LinkedHashMap<>();
            for (String key : p.stringPropertyNames()) {
                if (key.startsWith("pid.")) {
                    pids.put(key.substring(4), Long.parseLong(p.getProperty(key).trim()));
                }
            }
            return Optional.of(new State(ports, p.getProperty("service-cidr", "10.96.0.0/16"),
                    Boolean.parseBoolean(p.getProperty("run.kube-controller-manager", "true")),
                    Boolean.parseBoolean(p.getProperty("run.kube-scheduler", "true")), pids));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(file + " is damaged (" + e.getMessage() + "); stop what it started by hand and delete it", e);
        }
    }

    void write(Path dir) {
        Properties p = new Properties();
        p.setProperty("port.etcd-client", Integer.toString(ports.etcdClient()));
        p.setProperty("port.etcd-peer", Integer.toString(ports.etcdPeer()));
        p.setProperty("port.kube-apiserver", Integer.toString(ports.apiServer()));
        p.setProperty("port.kube-controller-manager", Integer.toString(ports.controllerManager()));
        p.setProperty("port.kube-scheduler", Integer.toString(ports.scheduler()));
        p.setProperty("service-cidr", serviceCidr);
        p.setProperty("run.kube-controller-manager", Boolean.toString(controllerManager));
        p.setProperty("run.kube-scheduler", Boolean.toString(scheduler));
        pids.forEach((name, pid) -> p.setProperty("pid." + name, Long.toString(pid)));
        Path file = dir.resolve(FILE);
        Path tmp = dir.resolve(FILE + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            p.store(w, "written by calico.controlplane; scripts/control-plane.sh stop " + dir + " stops these");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + tmp, e);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private static int intOf(Properties p, String key) {
        String v = p.getProperty(key);
        if (v == null) {
            throw new IllegalArgumentException("no " + key);
        }
        return Integer.parseInt(v.trim());
    }
}
