package calico.controlplane;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * How to start a control plane.
 *
 * @param dir               everything it writes: {@code pki/}, {@code logs/}, the kubeconfigs, its state file
 * @param etcdData          etcd's data directory ({@code dir/etcd} unless given; tests put it on tmpfs)
 * @param ports             loopback ports; 0 picks a free one
 * @param controllerManager whether to run kube-controller-manager
 * @param scheduler         whether to run kube-scheduler
 * @param serviceCidr       the Service IP range; its first address is the {@code kubernetes} Service's
 * @param detach            start every process in a session of its own, so that it outlives the
 *                          launcher and a Ctrl-C in the terminal that started it ({@code start DIR})
 * @param apiServerFlags    more kube-apiserver flags, after ours (a later flag wins), e.g.
 *                          {@code --watch-cache=false} so that watches read etcd and see its compactions
 */
public record Settings(Path dir, Path etcdData, Ports ports, boolean controllerManager, boolean scheduler,
                       String serviceCidr, boolean detach, List<String> apiServerFlags) {

    /** Loopback ports of the parts; 0 = a free port. */
    public record Ports(int etcdClient, int etcdPeer, int apiServer, int controllerManager, int scheduler) {
        public Ports {
            check("etcd client", etcdClient);
            check("etcd peer", etcdPeer);
            check("kube-apiserver", apiServer);
            check("kube-controller-manager", controllerManager);
            check("kube-scheduler", scheduler);
        }

        public static Ports free() {
            return new Ports(0, 0, 0, 0, 0);
        }

        private static void check(String what, int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(what + " port: must be between 0 and 65535, got " + port);
            }
        }
    }

    public Settings {
        Objects.requireNonNull(dir, "dir");
        dir = dir.toAbsolutePath();
        etcdData = etcdData == null ? dir.resolve("etcd") : etcdData.toAbsolutePath();
        Objects.requireNonNull(ports, "ports");
        Objects.requireNonNull(serviceCidr, "serviceCidr");
        apiServerFlags = List.copyOf(apiServerFlags);
        for (String f : apiServerFlags) {
            if (!f.startsWith("--")) {
                throw new IllegalArgumentException("kube-apiserver flag: must start with --, got " + f);
            }
        }
        if (!serviceCidr.matches("\\d+\\.\\d+\\.\\d+\\.0/\\d+")) {
            throw new IllegalArgumentException("service CIDR: must be an IPv4 network ending in .0, like 10.96.0.0/16; got "
                    + serviceCidr);
        }
    }

    /** Every part on free ports, state in {@code dir}, the Service range 10.96.0.0/16, attached to this process. */
    public static Settings in(Path dir) {
        return new Settings(dir, null, Ports.free(), true, true, "10.96.0.0/16", false, List.of());
    }

    public Settings withPorts(Ports p) {
        return new Settings(dir, etcdData, p, controllerManager, scheduler, serviceCidr, detach, apiServerFlags);
    }

    public Settings withEtcdData(Path d) {
        return new Settings(dir, d, ports, controllerManager, scheduler, serviceCidr, detach, apiServerFlags);
    }

    public Settings withControllerManager(boolean on) {
        return new Settings(dir, etcdData, ports, on, scheduler, serviceCidr, detach, apiServerFlags);
    }

    public Settings withScheduler(boolean on) {
        return new Settings(dir, etcdData, ports, controllerManager, on, serviceCidr, detach, apiServerFlags);
    }

    public Settings detached() {
        return new Settings(dir, etcdData, ports, controllerManager, scheduler, serviceCidr, true, apiServerFlags);
    }

    public Settings withApiServerFlags(String... flags) {
        return new Settings(dir, etcdData, ports, controllerManager, scheduler, serviceCidr, detach, List.of(flags));
    }

    /** {@return the first address of the service range}: the {@code kubernetes} Service's cluster IP. */
    public String apiServiceIp() {
        String net = serviceCidr.substring(0, serviceCidr.indexOf('/'));
        return net.substring(0, net.lastIndexOf('.')) + ".1";
    }
}
