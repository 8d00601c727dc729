package calico.felix.dataplane.rules;

/**
 * The packet-mark bits the rules use, taken from {@code iptablesMarkMask} as Calico allocates
 * them: the lowest set bit means "a policy or profile accepted the packet", the next one "a
 * policy passed the packet to the next tier", the third is scratch (raw PREROUTING marks
 * packets from workload interfaces with it for the anti-spoofing check); the mask's remaining
 * bits, {@code endpoint}, carry an endpoint's mark from INPUT to OUTPUT when kube-proxy runs in
 * IPVS mode ({@link EndpointMarks}).
 */
public record MarkBits(long accept, long pass, long scratch, long endpoint) {

    public static final long DEFAULT_MASK = 0xffff0000L;

    public static MarkBits defaults() {
        return fromMask(DEFAULT_MASK);
    }

    /** Allocates from the mask's low bits upward; the mask needs at least three bits. */
    public static MarkBits fromMask(long mask) {
        long first = Long.lowestOneBit(mask);
        long second = Long.lowestOneBit(mask & ~first);
        long third = Long.lowestOneBit(mask & ~first & ~second);
        if (first == 0 || second == 0 || third == 0 || mask > 0xffffffffL || mask < 0) {
            throw new IllegalArgumentException("iptablesMarkMask: needs at least three bits of a 32-bit mark, got 0x"
                    + Long.toHexString(mask));
        }
        return new MarkBits(first, second, third, mask & ~first & ~second & ~third);
    }

    /** The policy verdict bits: accept and pass. */
    public long both() {
        return accept | pass;
    }

    /** Every bit we use. */
    public long all() {
        return accept | pass | scratch;
    }

    public static String hex(long v) {
        return "0x" + Long.toHexString(v);
    }

    /** {@code <bits>/<bits>}: matches or sets exactly these bits. */
    public static String set(long bits) {
        return hex(bits) + "/" + hex(bits);
    }

    /** {@code 0x0/<bits>}: matches or sets these bits clear. */
    public static String clear(long bits) {
        return "0x0/" + hex(bits);
    }
}
