package calico.cni;

import calico.cni.daemon.CniDaemon;
import calico.cni.plugin.CalicoCni;
import calico.cni.plugin.DatastoreCache;
import calico.cni.plugin.WorkloadNetwork;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResponse;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.health.TrainingRun;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The plugin executable. Without arguments it is the plugin itself, one JVM per call (the
 * runtime's environment and stdin in, the result or error object on stdout, the exit status).
 * With {@code daemon [socket]} it is the node-local daemon the thin client forwards calls to
 * ({@code CALICO_CNI_HTTP_PORT}: port of its {@code /ipam/v1/usage} endpoint on 127.0.0.1;
 * {@code CALICO_CNI_NETNS}: a named network namespace standing in for the node's host side).
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length > 0 && args[0].equals("daemon")) {
            Path socket = Path.of(args.length > 1 ? args[1] : CniDaemon.DEFAULT_SOCKET);
            Map<String, String> env = System.getenv();
            int httpPort = Integer.parseInt(env.getOrDefault("CALICO_CNI_HTTP_PORT", "-1"));
            // The usage endpoint reads the datastore Calico's variables name (DATASTORE_TYPE, ETCD_ENDPOINTS).
            Datastore usage = env.containsKey("DATASTORE_TYPE") || env.containsKey("ETCD_ENDPOINTS")
                    ? DatastoreConfig.fromEnvironment(env).open() : null;
            String hostNetns = env.getOrDefault("CALICO_CNI_NETNS", "");
            if (!hostNetns.isBlank() && usage != null) {
                // Trap: gRPC's shared event-loop threads take the namespace of the thread that first
                // needs them; touch the datastore here, in the daemon's own namespace, before any
                // call runs inside CALICO_CNI_NETNS (whose 127.0.0.1 is not the datastore's).
                usage.list(calico.api.model.ResourceKind.IP_POOL);
            }
            CniDaemon daemon = CniDaemon.start(socket, httpPort, hostname(), usage, hostNetns);
            Runtime.getRuntime().addShutdownHook(new Thread(daemon::close));
            TrainingRun.endOnceReady("CNI daemon", () -> true); // serving once started
            daemon.awaitClose();
            return;
        }
        CniResponse r;
        try (DatastoreCache ds = new DatastoreCache()) {
            CalicoCni cni = new CalicoCni(new ObjectMapper(), hostname(), ds, new WorkloadNetwork());
            r = cni.handle(new CniRequest(System.getenv(), System.in.readAllBytes()));
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        out.print(r.stdout());
        out.flush();
        // halt: no shutdown hooks or lingering client threads between the answer and the exit
        Runtime.getRuntime().halt(r.exitCode());
    }

    public static String hostname() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
