package calico.libcalico.datastore.memory;

import calico.api.model.GlobalNetworkSet;
import calico.api.model.GlobalNetworkSetSpec;
import calico.api.model.NetworkSet;
import calico.api.model.NetworkSetSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import java.util.List;
import java.util.Map;

/** Small valid resources for datastore and syncer tests. */
public final class TestResources {

    private TestResources() {
    }

    /** {@return a cluster-scoped GlobalNetworkSet with one net}. */
    public static GlobalNetworkSet globalSet(String name, String net) {
        return new GlobalNetworkSet(ObjectMeta.named(name), new GlobalNetworkSetSpec(List.of(net)));
    }

    public static GlobalNetworkSet globalSet(String name, String net, Map<String, String> labels) {
        return new GlobalNetworkSet(ObjectMeta.named(name).withLabels(labels), new GlobalNetworkSetSpec(List.of(net)));
    }

    /** {@return a namespaced NetworkSet with one net}. */
    public static NetworkSet networkSet(String namespace, String name, String net) {
        return new NetworkSet(ObjectMeta.namespaced(namespace, name), new NetworkSetSpec(List.of(net)));
    }

    /** {@return the same resource with other spec nets, keeping its metadata (and resourceVersion)}. */
    public static Resource withNet(Resource r, String net) {
        if (r instanceof GlobalNetworkSet g) {
            return new GlobalNetworkSet(g.metadata(), new GlobalNetworkSetSpec(List.of(net)));
        }
        if (r instanceof NetworkSet n) {
            return new NetworkSet(n.metadata(), new NetworkSetSpec(List.of(net)));
        }
        throw new IllegalArgumentException("no test variant for " + r.kind());
    }

    /** {@return the first net of a test resource}. */
    public static String net(Resource r) {
        if (r instanceof GlobalNetworkSet g) {
            return g.spec().nets().get(0);
        }
        if (r instanceof NetworkSet n) {
            return n.spec().nets().get(0);
        }
        throw new IllegalArgumentException("no test variant for " + r.kind());
    }
}
