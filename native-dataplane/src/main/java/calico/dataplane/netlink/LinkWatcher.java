package calico.dataplane.netlink;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Listens for link changes: a {@code NETLINK_ROUTE} socket subscribed to the
 * {@code RTNLGRP_LINK} multicast group, whose {@code RTM_NEWLINK} / {@code RTM_DELLINK}
 * announcements are decoded into {@link LinkUpdate}s. Nothing is requested from the kernel; it
 * only listens.
 *
 * <p>Like every netlink socket it belongs to the network namespace of the thread that opened it,
 * for its whole life. One thread reads it: {@link #read} waits at most the given time, so a reader
 * loop can check a stop flag and then {@link #close} from the same thread (closing a descriptor
 * another thread is blocked on is a race).
 *
 * <p>If the kernel announces faster than the reader drains, the socket overflows and
 * {@link #read} throws {@link NetlinkException} with {@code ENOBUFS}: announcements were lost and
 * the caller must re-read the state it cares about (it can keep reading afterwards).
 */
public final class LinkWatcher implements AutoCloseable {

    static final int RTM_NEWLINK = 16;
    static final int RTM_DELLINK = 17;
    private static final int RTMGRP_LINK = 0x1; // 1 << (RTNLGRP_LINK - 1)
    private static final int IFF_UP = 0x1;
    private static final int IFLA_IFNAME = 3;
    private static final int IFINFOMSG_LEN = 16;

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int NETLINK_ROUTE = 0;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVBUF = 8;
    private static final int SO_RCVTIMEO = 20;
    private static final int EAGAIN = 11;
    private static final int BUFFER = 1 << 16;
    private static final int SOCKET_BUFFER = 1 << 20;

    private final LibC libc = LibC.INSTANCE;
    private final int fd;
    private final Memory buf = new Memory(BUFFER);
    private long timeoutMicros = -1;
    private boolean closed;

    private LinkWatcher(int fd) {
        this.fd = fd;
    }

    /** Opens a watcher in the calling thread's network namespace; fails naming the step and errno. */
    public static LinkWatcher open() {
        LibC libc = LibC.INSTANCE;
        int s = libc.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (s < 0) {
            throw new NetlinkException("open netlink link watcher", Native.getLastError(), null);
        }
        // A larger queue makes overflow (lost announcements) unlikely during bursts of veth churn.
        libc.setsockopt(s, SOL_SOCKET, SO_RCVBUF, new int[] {SOCKET_BUFFER}, 4);
        // sockaddr_nl: family, pad, pid 0 (kernel assigns), groups.
        byte[] local = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder())
                .putShort((short) AF_NETLINK).putShort((short) 0).putInt(0).putInt(RTMGRP_LINK).array();
        if (libc.bind(s, local, local.length) != 0) {
            int err = Native.getLastError();
            libc.close(s);
            throw new NetlinkException("subscribe to link changes (RTNLGRP_LINK)", err, null);
        }
        return new LinkWatcher(s);
    }

    /**
     * Waits up to {@code timeout} for announcements and returns those in the first datagram that
     * arrives, in kernel order; empty when nothing arrived.
     *
     * @throws NetlinkException with {@code ENOBUFS} when announcements were lost (re-read state)
     */
    public List<LinkUpdate> read(Duration timeout) {
        if (closed) {
            throw new IllegalStateException("link watcher is closed");
        }
        long micros = Math.max(1, timeout.toNanos() / 1000);
        if (micros != timeoutMicros) {
            libc.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, new long[] {micros / 1_000_000, micros % 1_000_000}, 16);
            timeoutMicros = micros;
        }
        long n = libc.recv(fd, buf, BUFFER, 0);
        if (n < 0) {
            int err = Native.getLastError();
            if (err == EAGAIN || err == Errno.EINTR) {
                return List.of();
            }
            throw new NetlinkException("read link changes", err,
                    err == Errno.ENOBUFS ? "announcements were lost; re-read the links" : null);
        }
        return decode(buf.getByteBuffer(0, n).order(ByteOrder.nativeOrder()));
    }

    /** Decodes every link announcement in one datagram; other message types are skipped. */
    static List<LinkUpdate> decode(ByteBuffer datagram) {
        ByteBuffer b = datagram.duplicate().order(ByteOrder.nativeOrder());
        List<LinkUpdate> out = new ArrayList<>();
        while (b.remaining() >= MessageWriter.NLMSG_HDRLEN) {
            int start = b.position();
            int len = b.getInt(start);
            int type = Short.toUnsignedInt(b.getShort(start + 4));
            if (len < MessageWriter.NLMSG_HDRLEN || start + len > b.limit()) {
                break; // malformed tail: the kernel never sends one; drop it rather than fail
            }
            if ((type == RTM_NEWLINK || type == RTM_DELLINK) && len >= MessageWriter.NLMSG_HDRLEN + IFINFOMSG_LEN) {
                ByteBuffer p = b.slice(start + MessageWriter.NLMSG_HDRLEN, len - MessageWriter.NLMSG_HDRLEN)
                        .order(ByteOrder.nativeOrder());
                int index = p.getInt(4);
                int flags = p.getInt(8);
                String name = Attributes.parse(p.position(IFINFOMSG_LEN)).string(IFLA_IFNAME).orElse("");
                boolean deleted = type == RTM_DELLINK;
                out.add(new LinkUpdate(name, index, !deleted && (flags & IFF_UP) != 0, deleted));
            }
            b.position(Math.min(b.limit(), start + MessageWriter.align(len)));
        }
        return out;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            libc.close(fd);
        }
    }
}
