package calico.cni.plugin;

import calico.cni.config.NetConf;
import calico.libcalico.datastore.Datastore;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One datastore client per configured datastore, shared by all calls (the daemon keeps its
 * connections warm; a JVM-per-call run opens one and closes it at exit).
 */
public final class DatastoreCache implements AutoCloseable {
    private final Map<String, Datastore> clients = new ConcurrentHashMap<>();

    public Datastore get(NetConf conf) {
        return clients.computeIfAbsent(Datastores.key(conf), k -> Datastores.open(conf));
    }

    @Override
    public void close() {
        clients.values().forEach(d -> {
            try {
                d.close();
            } catch (RuntimeException ignored) {
                // closing at exit: nothing left to do about it
            }
        });
        clients.clear();
    }
}
