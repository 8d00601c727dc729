package calico.felix.dataplane;

import com.sun.jna.Library;
import com.sun.jna.Native;

/**
 * Moves the calling thread into a named network namespace ({@code /run/netns/<name>}, as
 * {@code ip netns add} creates). Only that thread moves: netlink sockets it opens afterwards and
 * {@code /proc/sys/net} paths it opens act on the namespace. The move is for the thread's life,
 * so callers use a dedicated thread.
 */
public final class Setns {

    private static final int CLONE_NEWNET = 0x40000000;

    private interface LibC extends Library {
        LibC INSTANCE = Native.load("c", LibC.class);

        int open(String path, int flags);

        int close(int fd);

        int setns(int fd, int nstype);
    }

    private Setns() {
    }

    /** Enters {@code /run/netns/<name>}; fails naming the namespace and errno. */
    public static void enter(String name) {
        String path = "/run/netns/" + name;
        int fd = LibC.INSTANCE.open(path, 0);
        if (fd < 0) {
            throw new IllegalStateException("open " + path + ": errno " + Native.getLastError());
        }
        try {
            if (LibC.INSTANCE.setns(fd, CLONE_NEWNET) != 0) {
                throw new IllegalStateException("setns " + path + ": errno " + Native.getLastError());
            }
        } finally {
            LibC.INSTANCE.close(fd);
        }
    }
}
