package calico.dataplane.netlink;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code AF_NETLINK} socket ({@code NETLINK_ROUTE} unless told otherwise) and the request/response protocol on it:
 * send a request with a fresh sequence number, then read until the kernel's ACK (for a
 * non-dump request) or {@code NLMSG_DONE} (for a dump), turning {@code NLMSG_ERROR} into a
 * {@link NetlinkException}. Replies carrying another sequence number (left over from a request
 * that failed part-way) are skipped. Not thread-safe.
 *
 * <p>The socket belongs to the network namespace of the thread that created it, for its whole
 * life, whichever thread uses it later.
 */
final class NetlinkSocket implements AutoCloseable {
    static final int NLMSG_ERROR = 2;
    static final int NLMSG_DONE = 3;
    static final int NLM_F_REQUEST = 0x1;
    static final int NLM_F_MULTI = 0x2;
    static final int NLM_F_ACK = 0x4;
    static final int NLM_F_DUMP_INTR = 0x10;
    static final int NLM_F_REPLACE = 0x100;
    static final int NLM_F_EXCL = 0x200;
    static final int NLM_F_CREATE = 0x400;
    static final int NLM_F_DUMP = 0x300;

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int NETLINK_ROUTE = 0;
    private static final int SOL_NETLINK = 270;
    private static final int NETLINK_CAP_ACK = 10;
    private static final int NETLINK_EXT_ACK = 11;
    private static final int NLM_F_CAPPED = 0x100;
    private static final int NLM_F_ACK_TLVS = 0x200;
    private static final int NLMSGERR_ATTR_MSG = 1;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVTIMEO = 20;
    private static final int SO_SNDBUF = 7;
    private static final int SO_SNDBUFFORCE = 32;
    /** The kernel refuses a netlink message longer than the send buffer less this. */
    private static final int SEND_BUFFER_OVERHEAD = 32;
    /** A reply never takes this long; waiting longer would only hide a protocol bug as a hang. */
    private static final long RECV_TIMEOUT_SECONDS = 30;
    private static final int EAGAIN = 11;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int RECV_BUFFER = 1 << 20;
    private static final int MAX_DUMP_ATTEMPTS = 5;

    /** A decoded reply: its type and its payload (after the nlmsghdr). */
    record Message(int type, int flags, ByteBuffer payload) {
    }

    private final LibC libc = LibC.INSTANCE;
    private final int fd;
    private final Memory recvBuf = new Memory(RECV_BUFFER);
    private int seq;
    /** The longest message the send buffer takes (the kernel's default at first, a few hundred KiB). */
    private int sendable;
    private boolean closed;

    NetlinkSocket() {
        this(NETLINK_ROUTE);
    }

    /** A socket of another netlink protocol ({@code NETLINK_GENERIC} = 16, ...). */
    NetlinkSocket(int protocol) {
        this(protocol, 0);
    }

    /** A socket of {@code protocol} whose send buffer is at least {@code sendBuffer} bytes (0: the default). */
    NetlinkSocket(int protocol, int sendBuffer) {
        int s = libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
        if (s < 0) {
            throw new NetlinkException("open netlink socket", Native.getLastError(), null);
        }
        fd = s;
        // sockaddr_nl: family, pad, pid 0 (kernel assigns), groups 0.
        byte[] local = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putShort((short) AF_NETLINK).array();
        if (libc.bind(fd, local, local.length) != 0) {
            int err = Native.getLastError();
            libc.close(fd);
            throw new NetlinkException("bind netlink socket", err, null);
        }
        // Best effort: errors then echo only the request header and carry the kernel's reason.
        libc.setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, new int[] {1}, 4);
        libc.setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, new int[] {1}, 4);
        libc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, new long[] {RECV_TIMEOUT_SECONDS, 0}, 16);
        int[] size = {0};
        sendable = libc.getsockopt(fd, SOL_SOCKET, SO_SNDBUF, size, new int[] {4}) == 0
                ? size[0] - SEND_BUFFER_OVERHEAD : 0;
        fitSendBuffer(sendBuffer);
        seq = (int) (System.nanoTime() & 0x3fffffff);
    }

    /**
     * Makes the send buffer hold a message of {@code length} bytes: the kernel refuses a longer
     * message whole (EMSGSIZE), and a batch must go in one message. SO_SNDBUFFORCE (root) lifts
     * the sysctl cap, as libnftables does for its batches; without the privilege the send is
     * refused and the caller learns it from the errno.
     */
    private void fitSendBuffer(int length) {
        if (length <= sendable) {
            return;
        }
        // The kernel doubles what it is given (for its bookkeeping): the message then fits.
        if (libc.setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, new int[] {length}, 4) == 0) {
            sendable = length;
        }
    }

    /** Sends a change (or single get) with NLM_F_ACK and returns the replies before the ACK. */
    List<Message> execute(String operation, MessageWriter request) {
        return roundTrip(operation, request, false);
    }

    /** Sends a dump request and returns every reply up to NLMSG_DONE; retries interrupted dumps. */
    List<Message> dump(String operation, MessageWriter request) {
        for (int attempt = 1; ; attempt++) {
            try {
                return roundTrip(operation, request, true);
            } catch (DumpInterrupted e) {
                if (attempt == MAX_DUMP_ATTEMPTS) {
                    throw new NetlinkException(operation + " (dump kept changing)", Errno.EINTR, null);
                }
            }
        }
    }

    /**
     * Sends {@code messages} (each a whole netlink message whose sequence number is filled in
     * here) in one {@code sendto}, then reads the replies the kernel queued while handling them:
     * netfilter handles a batch inside the send, so everything it answers is waiting when the
     * call returns, and nothing more will come (this is how libnftables reads a batch's
     * answers). {@return the error code of each message the kernel answered, by index}
     * (0 for an ACK); a message it did not answer is absent.
     */
    java.util.Map<Integer, Integer> sendAll(String operation, List<MessageWriter> messages) {
        if (closed) {
            throw new IllegalStateException("netlink socket is closed");
        }
        int first = seq + 1;
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (MessageWriter m : messages) {
            all.writeBytes(m.finish(++seq));
        }
        byte[] msg = all.toByteArray();
        fitSendBuffer(msg.length);
        byte[] kernel = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putShort((short) AF_NETLINK).array();
        long sent = libc.sendto(fd, msg, msg.length, 0, kernel, kernel.length);
        if (sent < 0) {
            throw new NetlinkException(operation, Native.getLastError(), null);
        }
        java.util.Map<Integer, Integer> answers = new java.util.TreeMap<>();
        while (true) {
            long n = libc.recv(fd, recvBuf, RECV_BUFFER, MSG_DONTWAIT);
            if (n < 0) {
                int err = Native.getLastError();
                if (err == Errno.EINTR) {
                    continue;
                }
                if (err == EAGAIN) {
                    return answers;
                }
                throw new NetlinkException(operation, err, null);
            }
            ByteBuffer b = recvBuf.getByteBuffer(0, n).order(ByteOrder.nativeOrder());
            while (b.remaining() >= MessageWriter.NLMSG_HDRLEN) {
                int start = b.position();
                int len = b.getInt();
                int type = Short.toUnsignedInt(b.getShort());
                b.getShort(); // flags
                int replySeq = b.getInt();
                b.getInt(); // pid
                if (len < MessageWriter.NLMSG_HDRLEN || start + len > b.limit()) {
                    throw new NetlinkException(operation + " (malformed reply)", Errno.EINVAL, null);
                }
                if (type == NLMSG_ERROR && replySeq >= first && replySeq <= seq) {
                    int error = b.getInt(start + MessageWriter.NLMSG_HDRLEN);
                    answers.merge(replySeq - first, -error, (a, c) -> a != 0 ? a : c);
                }
                b.position(Math.min(b.limit(), start + MessageWriter.align(len)));
            }
        }
    }

    private List<Message> roundTrip(String operation, MessageWriter request, boolean dump) {
        if (closed) {
            throw new IllegalStateException("netlink socket is closed");
        }
        int mySeq = ++seq;
        byte[] msg = request.finish(mySeq);
        byte[] kernel = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putShort((short) AF_NETLINK).array();
        long sent = libc.sendto(fd, msg, msg.length, 0, kernel, kernel.length);
        if (sent < 0) {
            throw new NetlinkException(operation, Native.getLastError(), null);
        }
        List<Message> replies = new ArrayList<>();
        boolean interrupted = false;
        while (true) {
            long n = libc.recv(fd, recvBuf, RECV_BUFFER, 0);
            if (n < 0) {
                int err = Native.getLastError();
                if (err == Errno.EINTR) {
                    continue;
                }
                throw new NetlinkException(operation + (err == EAGAIN ? " (no reply from the kernel)" : ""), err, null);
            }
            ByteBuffer b = recvBuf.getByteBuffer(0, n).order(ByteOrder.nativeOrder());
            while (b.remaining() >= MessageWriter.NLMSG_HDRLEN) {
                int start = b.position();
                int len = b.getInt();
                int type = Short.toUnsignedInt(b.getShort());
                int flags = Short.toUnsignedInt(b.getShort());
                int replySeq = b.getInt();
                b.getInt(); // pid
                if (len < MessageWriter.NLMSG_HDRLEN || start + len > b.limit()) {
                    throw new NetlinkException(operation + " (malformed reply)", Errno.EINVAL, null);
                }
                ByteBuffer payload = copy(b, start + MessageWriter.NLMSG_HDRLEN, start + len);
                b.position(Math.min(b.limit(), start + MessageWriter.align(len)));
                if (replySeq != mySeq) {
                    continue; // a stale reply to an earlier request
                }
                if ((flags & NLM_F_DUMP_INTR) != 0) {
                    interrupted = true;
                }
                if (type == NLMSG_ERROR) {
                    int error = payload.getInt(0);
                    if (error == 0) {
                        return replies; // the ACK
                    }
                    throw new NetlinkException(operation, -error, extAckMessage(flags, payload));
                }
                if (type == NLMSG_DONE) {
                    if (payload.remaining() >= 4 && payload.getInt(0) < 0) {
                        throw new NetlinkException(operation, -payload.getInt(0), null);
                    }
                    if (interrupted) {
                        throw new DumpInterrupted();
                    }
                    return replies;
                }
                replies.add(new Message(type, flags, payload));
                if (dump && (flags & NLM_F_MULTI) == 0) {
                    return replies; // a dump answered with a single, non-multipart message
                }
            }
        }
    }

    private static ByteBuffer copy(ByteBuffer b, int from, int to) {
        byte[] out = new byte[to - from];
        b.get(from, out);
        return ByteBuffer.wrap(out).order(ByteOrder.nativeOrder());
    }

    /** The NLMSGERR_ATTR_MSG string after {@code struct nlmsgerr}, if the kernel sent one. */
    private static String extAckMessage(int flags, ByteBuffer payload) {
        if ((flags & NLM_F_ACK_TLVS) == 0 || payload.remaining() < 4 + MessageWriter.NLMSG_HDRLEN) {
            return null;
        }
        int echoed = (flags & NLM_F_CAPPED) != 0 ? MessageWriter.NLMSG_HDRLEN : payload.getInt(4);
        int offset = 4 + MessageWriter.align(echoed);
        if (offset > payload.limit()) {
            return null;
        }
        return Attributes.parse(payload.duplicate().position(offset)).string(NLMSGERR_ATTR_MSG).orElse(null);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            libc.close(fd);
        }
    }

    private static final class DumpInterrupted extends RuntimeException {
        DumpInterrupted() {
            super(null, null, false, false);
        }
    }
}
