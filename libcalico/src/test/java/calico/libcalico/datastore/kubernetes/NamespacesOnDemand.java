package calico.libcalico.datastore.kubernetes;

import calico.api.model.Resource;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.testing.ForwardingDatastore;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * A datastore on a real API server whose creates first make the resource's namespace if it is
 * missing: suites written for etcd and memory (where a namespace is only a name) run unchanged.
 * Closing it closes the datastore.
 */
final class NamespacesOnDemand extends ForwardingDatastore {

    private final Datastore datastore;
    private final KubernetesClient admin;

    NamespacesOnDemand(Datastore datastore, KubernetesClient admin) {
        super(datastore);
        this.datastore = datastore;
        this.admin = admin;
    }

    @Override
    public Resource create(Resource resource) {
        String ns = resource.metadata().namespace();
        if (ns != null && !ns.isEmpty() && admin.namespaces().withName(ns).get() == null) {
            try {
                admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                        .create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) { // 409: another create made it meanwhile
                    throw e;
                }
            }
        }
        return super.create(resource);
    }

    @Override
    public void close() {
        datastore.close();
    }
}
