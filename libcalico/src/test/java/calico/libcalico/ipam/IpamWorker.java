package calico.libcalico.ipam;

import calico.api.net.Cidr;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A separate process that allocates addresses through its own {@link IpamClient} (used by
 * {@link IpamMultiProcessTest} and {@code IpamBench}). Arguments: etcd endpoint, node name,
 * count, handle prefix. Protocol on stdin/stdout: prints {@code READY}, waits for {@code GO},
 * then one {@code IP <handle> <address> <micros>} line per allocation and {@code DONE}.
 */
public final class IpamWorker {

    private IpamWorker() {
    }

    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(args[0]);
        String node = args[1];
        int count = Integer.parseInt(args[2]);
        String prefix = args[3];
        try (EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(endpoint))) {
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            store.currentRevision(); // connected
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"GO".equals(in.readLine())) {
                return;
            }
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < count; i++) {
                String handle = prefix + "." + i;
                long t0 = System.nanoTime();
                AssignResult r = ipam.autoAssign(new AutoAssignRequest(handle, node, 1, 0, java.util.List.of(),
                        java.util.List.of(), Map.of("node", node), IntendedUse.WORKLOAD));
                long micros = (System.nanoTime() - t0) / 1000;
                for (Cidr c : r.ipv4()) {
                    out.append("IP ").append(handle).append(' ').append(c.address()).append(' ').append(micros).append('\n');
                }
            }
            System.out.print(out);
            System.out.println("DONE");
            System.out.flush();
        }
    }
}
