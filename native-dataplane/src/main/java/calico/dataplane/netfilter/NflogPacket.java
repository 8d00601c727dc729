package calico.dataplane.netfilter;

import java.time.Instant;

/**
 * One packet logged by an NFLOG rule.
 *
 * @param group the NFLOG group (felix: 1 inbound, 2 outbound)
 * @param prefix the rule's prefix exactly as set in the rule, without trailing NULs; "" if none
 * @param tuple the packet's addresses, protocol and ports
 * @param length the packet's full IP length in bytes (from the IP header, not the copied part)
 * @param inIfindex index of the interface the packet came in on, 0 when absent
 * @param outIfindex index of the interface the packet goes out on, 0 when absent
 * @param time the kernel's timestamp of the packet, or the time it was read when the kernel sent none
 */
public record NflogPacket(int group, String prefix, FlowTuple tuple, int length, int inIfindex, int outIfindex,
        Instant time) {
}
