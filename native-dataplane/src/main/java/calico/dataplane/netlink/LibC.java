package calico.dataplane.netlink;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * The few libc calls a netlink socket needs. {@code size_t}/{@code ssize_t} are mapped to Java
 * {@code long}: correct on 64-bit Linux (LP64), the only platform this module supports.
 * errno is read with {@link Native#getLastError()} right after each call, on the same thread.
 */
interface LibC extends Library {
    LibC INSTANCE = Native.load("c", LibC.class);

    int socket(int domain, int type, int protocol);

    int bind(int fd, byte[] addr, int addrLen);

    int setsockopt(int fd, int level, int name, int[] value, int valueLen);

    /** {@code valueLen}: in, the room in {@code value}; out, the bytes written. */
    int getsockopt(int fd, int level, int name, int[] value, int[] valueLen);

    /** For {@code struct timeval} options: two longs, seconds and microseconds. */
    int setsockopt(int fd, int level, int name, long[] value, int valueLen);

    long sendto(int fd, byte[] buf, long len, int flags, byte[] addr, int addrLen);

    long recv(int fd, Pointer buf, long len, int flags);

    int close(int fd);

    String strerror(int errnum);
}
