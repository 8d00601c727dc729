package calico.libcalico.ipam;

import calico.api.model.IPPoolSpec.AllowedUse;

/** What an address is for; a pool is used only when its {@code allowedUses} include it. */
public enum IntendedUse {
    WORKLOAD(AllowedUse.Workload),
    TUNNEL(AllowedUse.Tunnel),
    LOAD_BALANCER(AllowedUse.LoadBalancer);

    private final AllowedUse allowedUse;

    IntendedUse(AllowedUse allowedUse) {
        this.allowedUse = allowedUse;
    }

    /** {@return the pool's {@code allowedUses} value that admits this use} */
    public AllowedUse allowedUse() {
        return allowedUse;
    }
}
