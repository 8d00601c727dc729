package calico.dataplane.netfilter;

import calico.dataplane.netlink.Errno;
import calico.dataplane.netlink.NetlinkException;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * One {@code AF_NETLINK}/{@code NETLINK_NETFILTER} socket: acknowledged requests, dumps, and
 * reads of unsolicited messages (NFLOG packets, conntrack events) without copying them out of
 * the receive buffer. Not thread-safe: one thread at a time.
 *
 * <p>The socket belongs to the network namespace of the thread that created it, for its whole
 * life, whichever thread uses it later.
 */
final class NfnlSocket implements AutoCloseable {
    static final int NLMSG_ERROR = 2;
    static final int NLMSG_DONE = 3;
    static final int NLM_F_REQUEST = 0x1;
    static final int NLM_F_MULTI = 0x2;
    static final int NLM_F_ACK = 0x4;
    static final int NLM_F_DUMP_INTR = 0x10;
    static final int NLM_F_DUMP = 0x300;

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    static final int NETLINK_NETFILTER = 12;
    private static final int SOL_NETLINK = 270;
    private static final int NETLINK_ADD_MEMBERSHIP = 1;
    private static final int NETLINK_DROP_MEMBERSHIP = 2;
    private static final int NETLINK_CAP_ACK = 10;
    private static final int NETLINK_EXT_ACK = 11;
    private static final int NLM_F_CAPPED = 0x100;
    private static final int NLM_F_ACK_TLVS = 0x200;
    private static final int NLMSGERR_ATTR_MSG = 1;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVBUF = 8;
    private static final int SO_RCVBUFFORCE = 33;
    private static final int SO_RCVTIMEO = 20;
    static final int EAGAIN = 11;
    private static final long REPLY_TIMEOUT_SECONDS = 30;
    private static final int MAX_DUMP_ATTEMPTS = 5;

    /** Receives one netlink message in place: payload is {@code [from, to)} of {@code buf}, after the nlmsghdr. */
    interface Handler {
        void message(int type, int flags, ByteBuffer buf, int from, int to);
    }

    private final NfLibC libc = NfLibC.INSTANCE;
    private final int fd;
    private final Memory recvBuf;
    private final int recvSize;
    private int seq = (int) (System.nanoTime() & 0x3fffffff);
    private long timeoutMicros = -1;
    private volatile boolean closed;

    /**
     * Opens and binds a socket in the calling thread's namespace.
     *
     * @param recvSize bytes of the user-space buffer one datagram is read into
     * @param kernelQueue bytes the kernel may queue for us before it drops (ENOBUFS); 0 keeps the default
     */
    NfnlSocket(String purpose, int recvSize, int kernelQueue) {
        int s = libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
        if (s < 0) {
            throw new NetlinkException("open netfilter netlink socket for " + purpose, Native.getLastError(), null);
        }
        fd = s;
        if (kernelQueue > 0) {
            // FORCE lifts the rmem_max cap (root/CAP_NET_ADMIN); otherwise settle for what is allowed.
            if (libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, new int[] {kernelQueue}, 4) != 0) {
                libc.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, new int[] {kernelQueue}, 4);
            }
        }
        byte[] local = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putShort((short) AF_NETLINK).array();
        if (libc.bind(fd, local, local.length) != 0) {
            int err = Native.getLastError();
            libc.close(fd);
            throw new NetlinkException("bind netfilter netlink socket for " + purpose, err, null);
        }
        libc.setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, new int[] {1}, 4);
        libc.setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, new int[] {1}, 4);
        this.recvSize = recvSize;
        this.recvBuf = new Memory(recvSize);
        setReceiveTimeout(Duration.ofSeconds(REPLY_TIMEOUT_SECONDS));
    }

    /** Joins a multicast group ({@code NFNLGRP_*}); messages to it then queue on this socket. */
    void joinGroup(String operation, int group) {
        if (libc.setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, new int[] {group}, 4) != 0) {
            throw new NetlinkException(operation, Native.getLastError(), null);
        }
    }

    void leaveGroup(int group) {
        libc.setsockopt(fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, new int[] {group}, 4);
    }

    /** {@return the kernel's receive queue size in bytes} (as the kernel reports it: twice what was asked). */
    int kernelQueueBytes() {
        int[] v = {0};
        libc.getsockopt(fd, SOL_SOCKET, SO_RCVBUF, v, new int[] {4});
        return v[0];
    }

    void setReceiveTimeout(Duration timeout) {
        long micros = Math.max(1, timeout.toNanos() / 1000);
        if (micros != timeoutMicros) {
            libc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, new long[] {micros / 1_000_000, micros % 1_000_000}, 16);
            timeoutMicros = micros;
        }
    }

    /**
     * Sends {@code request} with NLM_F_ACK and waits for its ACK; messages that are not replies
     * to it (multicast, or a stale reply) are skipped.
     */
    void execute(String operation, NfRequest request) {
        int mySeq = send(operation, request);
        while (true) {
            ByteBuffer b = receiveOrThrow(operation, true);
            int p = 0;
            while (p + NfRequest.NLMSG_HDRLEN <= b.limit()) {
                int len = b.getInt(p);
                int type = Short.toUnsignedInt(b.getShort(p + 4));
                int replySeq = b.getInt(p + 8);
                if (len < NfRequest.NLMSG_HDRLEN || p + len > b.limit()) {
                    break;
                }
                if (replySeq == mySeq && type == NLMSG_ERROR) {
                    int error = b.getInt(p + NfRequest.NLMSG_HDRLEN);
                    if (error == 0) {
                        return;
                    }
                    throw new NetlinkException(operation, -error, extAckMessage(b, p, len));
                }
                p += NfRequest.align(len);
            }
        }
    }

    /**
     * Sends a dump request and hands every reply to {@code handler} up to NLMSG_DONE. If the
     * kernel flags the dump interrupted (the table changed under it), {@code restart} is run and
     * the dump repeated, up to 5 times, then EINTR.
     */
    void dump(String operation, Supplier<NfRequest> request, Runnable restart, Handler handler) {
        for (int attempt = 1; ; attempt++) {
            if (dumpOnce(operation, request.get(), handler)) {
                return;
            }
            if (attempt == MAX_DUMP_ATTEMPTS) {
                throw new NetlinkException(operation + " (dump kept changing)", Errno.EINTR, null);
            }
            restart.run();
        }
    }

    private boolean dumpOnce(String operation, NfRequest request, Handler handler) {
        int mySeq = send(operation, request);
        boolean interrupted = false;
        while (true) {
            ByteBuffer b = receiveOrThrow(operation, false);
            int p = 0;
            while (p + NfRequest.NLMSG_HDRLEN <= b.limit()) {
                int len = b.getInt(p);
                int type = Short.toUnsignedInt(b.getShort(p + 4));
                int flags = Short.toUnsignedInt(b.getShort(p + 6));
                int replySeq = b.getInt(p + 8);
                if (len < NfRequest.NLMSG_HDRLEN || p + len > b.limit()) {
                    throw new NetlinkException(operation + " (malformed reply)", Errno.EINVAL, null);
                }
                int next = p + NfRequest.align(len);
                if (replySeq != mySeq) {
                    p = next;
                    continue;
                }
                if ((flags & NLM_F_DUMP_INTR) != 0) {
                    interrupted = true;
                }
                if (type == NLMSG_ERROR) {
                    int error = b.getInt(p + NfRequest.NLMSG_HDRLEN);
                    if (error == 0) {
                        return !interrupted;
                    }
                    throw new NetlinkException(operation, -error, extAckMessage(b, p, len));
                }
                if (type == NLMSG_DONE) {
                    if (len >= NfRequest.NLMSG_HDRLEN + 4 && b.getInt(p + NfRequest.NLMSG_HDRLEN) < 0) {
                        throw new NetlinkException(operation, -b.getInt(p + NfRequest.NLMSG_HDRLEN), null);
                    }
                    return !interrupted;
                }
                handler.message(type, flags, b, p + NfRequest.NLMSG_HDRLEN, p + len);
                p = next;
            }
        }
    }

    /**
     * Reads one datagram and hands each whole message in it to {@code handler}.
     *
     * @return the datagram's size; 0 on timeout or EINTR; {@code -errno} on a socket error
     *         (e.g. {@code -ENOBUFS}: the kernel dropped messages because the queue was full).
     *         A malformed message header stops the walk of that datagram and counts in
     *         {@code malformed[0]}.
     */
    long receive(Handler handler, long[] malformed) {
        long n = libc.recv(fd, recvBuf, recvSize, 0);
        if (n < 0) {
            int err = Native.getLastError();
            return err == EAGAIN || err == Errno.EINTR ? 0 : -err;
        }
        ByteBuffer b = recvBuf.getByteBuffer(0, n).order(ByteOrder.nativeOrder());
        int p = 0;
        while (p + NfRequest.NLMSG_HDRLEN <= b.limit()) {
            int len = b.getInt(p);
            int type = Short.toUnsignedInt(b.getShort(p + 4));
            int flags = Short.toUnsignedInt(b.getShort(p + 6));
            if (len < NfRequest.NLMSG_HDRLEN || p + len > b.limit()) {
                malformed[0]++;
                break;
            }
            handler.message(type, flags, b, p + NfRequest.NLMSG_HDRLEN, p + len);
            p += NfRequest.align(len);
        }
        return n;
    }

    /**
     * The kernel's NLMSGERR_ATTR_MSG text in the NLMSG_ERROR at {@code p} (length {@code len}),
     * or null: {@code struct nlmsgerr} is the errno and the echoed request header (only the
     * header, as NETLINK_CAP_ACK is set), then, with NLM_F_ACK_TLVS, attributes.
     */
    private static String extAckMessage(ByteBuffer b, int p, int len) {
        int flags = Short.toUnsignedInt(b.getShort(p + 6));
        if ((flags & NLM_F_ACK_TLVS) == 0) {
            return null;
        }
        int from = p + NfRequest.NLMSG_HDRLEN + 4;
        if (from + NfRequest.NLMSG_HDRLEN > p + len) {
            return null;
        }
        int echoed = (flags & NLM_F_CAPPED) != 0 ? NfRequest.NLMSG_HDRLEN : b.getInt(from);
        int attrs = from + NfRequest.align(echoed);
        if (attrs > p + len) {
            return null;
        }
        // Attribute headers are host order like every netlink header; the string is the value.
        java.nio.ByteBuffer copy = b.duplicate().order(ByteOrder.nativeOrder());
        int q = attrs;
        while (q + 4 <= p + len) {
            int alen = Short.toUnsignedInt(copy.getShort(q));
            int atype = Short.toUnsignedInt(copy.getShort(q + 2)) & 0x3fff;
            if (alen < 4 || q + alen > p + len) {
                return null;
            }
            if (atype == NLMSGERR_ATTR_MSG) {
                int n = 0;
                while (n < alen - 4 && copy.get(q + 4 + n) != 0) {
                    n++;
                }
                byte[] text = new byte[n];
                copy.get(q + 4, text);
                return new String(text, java.nio.charset.StandardCharsets.UTF_8);
            }
            q += NfRequest.align(alen);
        }
        return null;
    }

    private int send(String operation, NfRequest request) {
        if (closed) {
            throw new IllegalStateException("netfilter netlink socket is closed");
        }
        int mySeq = ++seq;
        byte[] msg = request.finish(mySeq);
        byte[] kernel = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putShort((short) AF_NETLINK).array();
        if (libc.sendto(fd, msg, msg.length, 0, kernel, kernel.length) < 0) {
            throw new NetlinkException(operation, Native.getLastError(), null);
        }
        return mySeq;
    }

    /** @param overrunOk whether ENOBUFS (multicast messages lost) may be skipped: not in a dump, whose data it would be */
    private ByteBuffer receiveOrThrow(String operation, boolean overrunOk) {
        while (true) {
            long n = libc.recv(fd, recvBuf, recvSize, 0);
            if (n >= 0) {
                return recvBuf.getByteBuffer(0, n).order(ByteOrder.nativeOrder());
            }
            int err = Native.getLastError();
            if (err == Errno.EINTR) {
                continue;
            }
            if (err == Errno.ENOBUFS && overrunOk) {
                // Multicast messages overflowed the queue while we waited for our reply; the
                // reply itself is still coming.
                continue;
            }
            throw new NetlinkException(operation + (err == EAGAIN ? " (no reply from the kernel)" : ""), err, null);
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            libc.close(fd);
        }
    }
}
