package calico.dataplane.netfilter;

import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * Turns {@code NFULNL_MSG_PACKET} messages into {@link NflogPacket}s and keeps the counts a
 * reader reports: packets decoded, malformed messages, and packets the kernel could not deliver
 * (gaps in each group's {@code NFULA_SEQ}). Single-threaded: owned by one reader thread.
 */
final class NflogDecoder {
    static final int NFNL_SUBSYS_ULOG = 4;
    static final int NFULNL_MSG_PACKET = 0;
    static final int NFULNL_MSG_CONFIG = 1;

    static final int NFULA_PACKET_HDR = 1;
    static final int NFULA_MARK = 2;
    static final int NFULA_TIMESTAMP = 3;
    static final int NFULA_IFINDEX_INDEV = 4;
    static final int NFULA_IFINDEX_OUTDEV = 5;
    static final int NFULA_PAYLOAD = 9;
    static final int NFULA_PREFIX = 10;
    static final int NFULA_SEQ = 12;

    private static final int NFGENMSG_LEN = 4;

    private long decoded;
    private long malformed;
    private long lost;
    /** Groups seen so far and the next NFULA_SEQ expected from each (a reader binds a handful). */
    private int[] seqGroups = new int[4];
    private long[] nextSeq = new long[4];
    private int seqCount;

    /**
     * Decodes one netlink message (payload {@code [from, to)} of {@code buf}).
     *
     * @param now the time to use when the kernel sent no timestamp
     * @return the packet, or null when the message is not an NFLOG packet or is malformed (counted)
     */
    NflogPacket decode(int type, ByteBuffer buf, int from, int to, Instant now) {
        if (type != (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET)) {
            return null;
        }
        if (to - from < NFGENMSG_LEN) {
            malformed++;
            return null;
        }
        int family = Byte.toUnsignedInt(buf.get(from));
        int group = NfAttrs.beShort(buf, from + 2);
        NfAttrs a = NfAttrs.parse(buf, from + NFGENMSG_LEN, to);
        if (a.has(NFULA_SEQ)) {
            trackSequence(group, a.be32(NFULA_SEQ, 0));
        }
        if (a.truncated() || !a.has(NFULA_PAYLOAD)) {
            malformed++;
            return null;
        }
        PacketParser.Parsed parsed;
        try {
            parsed = PacketParser.parse(buf, a.offset(NFULA_PAYLOAD), a.length(NFULA_PAYLOAD), family);
        } catch (PacketParser.Malformed e) {
            malformed++;
            return null;
        }
        String prefix = a.string(NFULA_PREFIX);
        Instant time = now;
        if (a.length(NFULA_TIMESTAMP) >= 16) {
            int at = a.offset(NFULA_TIMESTAMP);
            long sec = NfAttrs.beLong(buf, at);
            long usec = NfAttrs.beLong(buf, at + 8);
            time = Instant.ofEpochSecond(sec, usec * 1000);
        }
        decoded++;
        return new NflogPacket(group, prefix == null ? "" : prefix, parsed.tuple(), parsed.length(),
                (int) a.be32(NFULA_IFINDEX_INDEV, 0), (int) a.be32(NFULA_IFINDEX_OUTDEV, 0), time);
    }

    /** Adds the gap between the expected and the received sequence number of {@code group} to {@link #lost()}. */
    private void trackSequence(int group, long seq) {
        for (int i = 0; i < seqCount; i++) {
            if (seqGroups[i] == group) {
                if (seq > nextSeq[i]) {
                    lost += seq - nextSeq[i];
                }
                nextSeq[i] = (seq + 1) & 0xffffffffL;
                return;
            }
        }
        if (seqCount == seqGroups.length) {
            seqGroups = java.util.Arrays.copyOf(seqGroups, seqCount * 2);
            nextSeq = java.util.Arrays.copyOf(nextSeq, seqCount * 2);
        }
        seqGroups[seqCount] = group;
        nextSeq[seqCount++] = (seq + 1) & 0xffffffffL; // the first packet seen: nothing before it counts
    }

    /** Counts a message whose netlink header was already unreadable. */
    void countMalformed(long n) {
        malformed += n;
    }

    long decoded() {
        return decoded;
    }

    long malformed() {
        return malformed;
    }

    long lost() {
        return lost;
    }
}
