package calico.api.model;

/** The directions a policy applies to ({@code spec.types}). */
public enum PolicyType {
    Ingress, Egress
}
