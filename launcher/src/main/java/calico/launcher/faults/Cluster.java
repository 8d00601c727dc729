package calico.launcher.faults;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What the fault suite needs of a running {@code ./calico up}: its processes, and a way to bring one back. */
public interface Cluster {

    /** The run directory ({@code .calico-run}): pid files, pods, nodes, logs. */
    Path runDir();

    /** The repository ({@code ./calico}, {@code launcher/target/launcher.jar}). */
    Path root();

    /** {@return the pid of the running service} ({@code felix-node-1}, {@code typha}, {@code kube}, ...), from its pid file. */
    Optional<Long> pid(String service);

    /** Starts {@code service} when it does not run and returns once it is ready. */
    void restart(String service);

    /**
     * {@return whether every node's services are ready and back on their sources}: felix in sync through
     * typha, confd connected to typha (a service can stay ready through a short outage of its source).
     */
    boolean nodesRecovered();

    /** The nodes' network namespaces, node 1 first. */
    List<String> nodeNamespaces();

    /** The prefix of every namespace {@code up} made ({@code calico-}): a pod's is {@code <prefix>pod-<ns>-<pod>}. */
    String prefix();
}
