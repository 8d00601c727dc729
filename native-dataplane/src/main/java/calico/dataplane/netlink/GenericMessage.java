package calico.dataplane.netlink;

/**
 * The payload of one generic netlink request, for {@link GenericNetlinkSocket#request}: the genl
 * header (command, version), then attributes in host byte order, each padded to 4 bytes, written
 * by the same {@link MessageWriter} as rtnetlink's requests. Nested attributes are opened with
 * {@link #begin} (flagged {@code NLA_F_NESTED}) and closed with {@link #end}.
 */
public final class GenericMessage {
    private static final int NLA_F_NESTED = 0x8000;

    private final MessageWriter w = MessageWriter.payload();

    public GenericMessage(int command, int version) {
        w.u8(command).u8(version).u16(0);
    }

    public GenericMessage attr(int type, byte[] value) {
        w.attr(type, value);
        return this;
    }

    /** A NUL-terminated string. */
    public GenericMessage string(int type, String value) {
        w.attrString(type, value);
        return this;
    }

    public GenericMessage u16(int type, int value) {
        w.attrU16(type, value);
        return this;
    }

    public GenericMessage u32(int type, int value) {
        w.attrU32(type, value);
        return this;
    }

    /** Opens a nested attribute; {@return where it starts}, for {@link #end}. */
    public int begin(int type) {
        return w.beginNested(type | NLA_F_NESTED);
    }

    public void end(int start) {
        w.endNested(start);
    }

    public byte[] bytes() {
        return w.bytes();
    }
}
