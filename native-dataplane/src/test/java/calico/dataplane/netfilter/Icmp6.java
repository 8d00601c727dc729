package calico.dataplane.netfilter;

import calico.dataplane.testing.NetNs;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Sends one ICMPv6 echo request through a kernel ping socket (no ping binary needed). */
final class Icmp6 {
    private interface C extends Library {
        C INSTANCE = Native.load("c", C.class);

        int socket(int domain, int type, int protocol);

        long sendto(int fd, byte[] buf, long length, int flags, byte[] address, int addressLength);

        int close(int fd);
    }

    private Icmp6() {
    }

    /** Sends an echo request from inside {@code ns} (whose ping_group_range must allow it) to {@code ip}. */
    static void echo(NetNs ns, String ip) {
        ns.run(() -> {
            int fd = C.INSTANCE.socket(10, 2, 58); // AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6
            if (fd < 0) {
                throw new IllegalStateException("ICMPv6 ping socket: errno " + Native.getLastError());
            }
            try {
                byte[] request = new byte[16];
                request[0] = (byte) 128; // echo request
                ByteBuffer sa = ByteBuffer.allocate(28);
                sa.order(ByteOrder.nativeOrder()).putShort((short) 10);
                sa.order(ByteOrder.BIG_ENDIAN).putShort((short) 0).putInt(0).put(InetAddress.getByName(ip).getAddress()).putInt(0);
                if (C.INSTANCE.sendto(fd, request, request.length, 0, sa.array(), 28) < 0) {
                    throw new IllegalStateException("ICMPv6 echo to " + ip + ": errno " + Native.getLastError());
                }
            } catch (java.net.UnknownHostException e) {
                throw new IllegalArgumentException(e);
            } finally {
                C.INSTANCE.close(fd);
            }
        });
    }
}
