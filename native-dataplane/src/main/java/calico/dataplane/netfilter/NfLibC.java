package calico.dataplane.netfilter;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * The libc calls a netfilter netlink socket needs. The netlink package has the same binding,
 * package-private to it; this one adds nothing but is kept here so the two packages can change
 * independently. {@code size_t}/{@code ssize_t} are Java {@code long} (64-bit Linux only).
 */
interface NfLibC extends Library {
    NfLibC INSTANCE = Native.load("c", NfLibC.class);

    int socket(int domain, int type, int protocol);

    int bind(int fd, byte[] addr, int addrLen);

    int setsockopt(int fd, int level, int name, int[] value, int valueLen);

    /** For {@code struct timeval} options: two longs, seconds and microseconds. */
    int setsockopt(int fd, int level, int name, long[] value, int valueLen);

    int getsockopt(int fd, int level, int name, int[] value, int[] valueLen);

    long sendto(int fd, byte[] buf, long len, int flags, byte[] addr, int addrLen);

    long recv(int fd, Pointer buf, long len, int flags);

    int close(int fd);
}
