package calico.api.model;

/**
 * An IPAM handle: which blocks hold how many addresses of one owner (a workload's handle ID, e.g. {@code k8s-pod-network.<container ID>}). Named by {@link IpamNames#handleName}.
 * Calico stores it as the custom resource of the same kind in {@code crd.projectcalico.org/v1}.
 */
public record IPAMHandle(ObjectMeta metadata, IPAMHandleSpec spec) implements Resource {

    @Override
    public IPAMHandle withMetadata(ObjectMeta newMetadata) {
        return new IPAMHandle(newMetadata, spec);
    }
}
