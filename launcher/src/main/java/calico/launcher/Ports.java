package calico.launcher;

/**
 * The loopback ports of node 1's services; node {@code i} adds {@code (i - 1) * stride} to each.
 * Node 1 keeps the ports a one-node {@code ./calico up} always had (felix 9099/9097).
 */
record Ports(int felixHealth, int felixAdmin, int felixMetrics, int confdHealth, int confdAdmin, int cniHttp, int stride) {

    static final Ports DEFAULT = new Ports(9099, 9097, 9091, 9086, 9085, 9088, 100);

    Ports {
        for (int p : new int[] {felixHealth, felixAdmin, felixMetrics, confdHealth, confdAdmin, cniHttp}) {
            if (p < 1 || p > 65535) {
                throw new IllegalArgumentException("ports: " + p + " is not between 1 and 65535");
            }
        }
        if (stride < 1) {
            throw new IllegalArgumentException("--port-stride: must be positive, got " + stride);
        }
    }

    /** {@return node {@code index}'s ports} (its own stride 0). */
    Ports forNode(int index) {
        int d = (index - 1) * stride;
        Ports p = new Ports(felixHealth + d, felixAdmin + d, felixMetrics + d, confdHealth + d, confdAdmin + d, cniHttp + d, stride);
        if (Math.max(Math.max(p.felixHealth, p.felixAdmin), Math.max(p.confdHealth, p.cniHttp)) > 65535) {
            throw new IllegalArgumentException("node " + index + "'s ports pass 65535: lower --port-stride or --nodes");
        }
        return p;
    }
}
