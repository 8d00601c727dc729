package calico.dataplane.netlink;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * One {@code NETLINK_GENERIC} socket: family ids by name (the {@code nlctrl} controller) and
 * requests whose generic-netlink header and attributes a caller encodes itself (in host byte
 * order, attributes aligned to 4). Like {@link Netlink}, it belongs to the network namespace of
 * the thread that made it and is not thread-safe.
 */
public final class GenericNetlinkSocket implements AutoCloseable {
    private static final int NETLINK_GENERIC = 16;
    private static final int GENL_ID_CTRL = 0x10;
    private static final int CTRL_CMD_GETFAMILY = 3;
    private static final int CTRL_ATTR_FAMILY_ID = 1;
    private static final int CTRL_ATTR_FAMILY_NAME = 2;

    public static final int NLM_F_DUMP = NetlinkSocket.NLM_F_DUMP;

    private final NetlinkSocket socket = new NetlinkSocket(NETLINK_GENERIC);

    /** {@return the id of generic netlink family {@code name}}, empty when the kernel has none (module not loaded) */
    public OptionalInt familyId(String name) {
        MessageWriter w = new MessageWriter(GENL_ID_CTRL, NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK)
                .u8(CTRL_CMD_GETFAMILY).u8(1).u16(0).attrString(CTRL_ATTR_FAMILY_NAME, name);
        try {
            for (NetlinkSocket.Message m : socket.execute("find generic netlink family " + name, w)) {
                Attributes a = Attributes.parse(m.payload().position(4));
                byte[] id = a.bytes(CTRL_ATTR_FAMILY_ID).orElse(null);
                if (id != null && id.length >= 2) {
                    return OptionalInt.of(Short.toUnsignedInt(ByteBuffer.wrap(id).order(java.nio.ByteOrder.nativeOrder()).getShort()));
                }
            }
            return OptionalInt.empty();
        } catch (NetlinkException e) {
            if (e.errno() == Errno.ENOENT) {
                return OptionalInt.empty();
            }
            throw e;
        }
    }

    /**
     * Sends a message of {@code family} whose payload (generic netlink header, then attributes)
     * is {@code payload}; {@return the payloads of the replies} (after their nlmsghdr).
     *
     * @param flags 0 for a change (acknowledged), {@link #NLM_F_DUMP} for a dump
     */
    public List<ByteBuffer> request(String operation, int family, int flags, byte[] payload) {
        MessageWriter w = new MessageWriter(family, NetlinkSocket.NLM_F_REQUEST
                | (flags == NLM_F_DUMP ? NLM_F_DUMP : NetlinkSocket.NLM_F_ACK | flags)).raw(payload);
        List<NetlinkSocket.Message> replies = flags == NLM_F_DUMP ? socket.dump(operation, w) : socket.execute(operation, w);
        List<ByteBuffer> out = new ArrayList<>();
        replies.forEach(m -> out.add(m.payload()));
        return out;
    }

    @Override
    public void close() {
        socket.close();
    }
}
