package calico.dataplane.netlink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A {@code NETLINK_NETFILTER} socket that sends nf_tables messages as one batch, which the
 * kernel commits whole or not at all: {@code NFNL_MSG_BATCH_BEGIN}, the messages, {@code
 * NFNL_MSG_BATCH_END}, in one {@code sendto}. The messages' payloads (the {@code nfgenmsg}
 * header, then attributes) are encoded by the caller. Not thread-safe; acts in the network
 * namespace of the thread that opened it, for its whole life.
 */
public final class NftablesSocket implements AutoCloseable {
    private static final int NETLINK_NETFILTER = 12;
    private static final int NFNL_SUBSYS_NFTABLES = 10;
    private static final int NFNL_MSG_BATCH_BEGIN = 0x10;
    private static final int NFNL_MSG_BATCH_END = 0x11;
    private static final int EIO = 5;
    /** Room for a batch of a few thousand rules in one message; a larger batch grows it (root only). */
    private static final int SEND_BUFFER = 8 << 20;

    /** {@code NLM_F_CREATE}, {@code NLM_F_APPEND} and {@code NLM_F_EXCL} for {@link Message#flags}. */
    public static final int NLM_F_CREATE = NetlinkSocket.NLM_F_CREATE;
    public static final int NLM_F_APPEND = 0x800;
    public static final int NLM_F_EXCL = NetlinkSocket.NLM_F_EXCL;

    /**
     * One nf_tables message.
     *
     * @param command {@code NFT_MSG_*} (the subsystem is added here)
     * @param flags   flags beyond {@code NLM_F_REQUEST}
     * @param payload {@code nfgenmsg} then attributes, 4-byte aligned
     */
    public record Message(int command, int flags, byte[] payload) {
    }

    private final NetlinkSocket socket = new NetlinkSocket(NETLINK_NETFILTER, SEND_BUFFER);

    /**
     * Sends {@code messages} as one transaction.
     *
     * @throws NetlinkException naming the first message the kernel refused, or the commit (nothing is applied)
     */
    public void commit(List<Message> messages) {
        if (messages.isEmpty()) {
            return;
        }
        List<MessageWriter> all = new ArrayList<>(messages.size() + 2);
        all.add(batchMarker(NFNL_MSG_BATCH_BEGIN));
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            // Only the last is acknowledged: its ACK says the kernel took the batch; an error names its message.
            int ack = i == messages.size() - 1 ? NetlinkSocket.NLM_F_ACK : 0;
            all.add(new MessageWriter((NFNL_SUBSYS_NFTABLES << 8) | m.command(),
                    NetlinkSocket.NLM_F_REQUEST | ack | m.flags()).raw(m.payload()));
        }
        all.add(batchMarker(NFNL_MSG_BATCH_END));
        Map<Integer, Integer> answers = socket.sendAll("nftables batch", all);
        for (Map.Entry<Integer, Integer> a : answers.entrySet()) {
            if (a.getValue() != 0) {
                int index = a.getKey() - 1; // the batch begin is -1: the commit itself failed
                throw new NetlinkException(index < 0 || index >= messages.size() ? "nftables batch commit"
                        : "nftables batch message " + index + " (NFT_MSG " + messages.get(index).command() + ")",
                        a.getValue(), null);
            }
        }
        if (!answers.containsKey(messages.size())) {
            throw new NetlinkException("nftables batch (no answer from the kernel)", EIO, null);
        }
    }

    private static MessageWriter batchMarker(int type) {
        // nfgenmsg: family AF_UNSPEC, version 0, res_id = the subsystem (big-endian)
        return new MessageWriter(type, NetlinkSocket.NLM_F_REQUEST).u8(0).u8(0)
                .raw(new byte[] {0, (byte) NFNL_SUBSYS_NFTABLES});
    }

    @Override
    public void close() {
        socket.close();
    }
}
