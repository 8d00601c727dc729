package calico.dataplane.netlink;

import java.util.Map;

/** Linux errno numbers netlink callers meet, by name; unknown numbers print as {@code E<n>}. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ERANGE = 34;
    public static final int EMSGSIZE = 90;
    public static final int EOPNOTSUPP = 95;
    public static final int EAFNOSUPPORT = 97;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ENOBUFS = 105;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(EPERM, "EPERM"), Map.entry(ENOENT, "ENOENT"), Map.entry(ESRCH, "ESRCH"),
            Map.entry(EINTR, "EINTR"), Map.entry(5, "EIO"), Map.entry(6, "ENXIO"),
            Map.entry(9, "EBADF"), Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"),
            Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"), Map.entry(EBUSY, "EBUSY"),
            Map.entry(EEXIST, "EEXIST"), Map.entry(ENODEV, "ENODEV"), Map.entry(EINVAL, "EINVAL"),
            Map.entry(24, "EMFILE"), Map.entry(28, "ENOSPC"), Map.entry(ERANGE, "ERANGE"),
            Map.entry(90, "EMSGSIZE"), Map.entry(93, "EPROTONOSUPPORT"),
            Map.entry(EOPNOTSUPP, "EOPNOTSUPP"), Map.entry(EAFNOSUPPORT, "EAFNOSUPPORT"),
            Map.entry(EADDRNOTAVAIL, "EADDRNOTAVAIL"), Map.entry(100, "ENETDOWN"),
            Map.entry(ENETUNREACH, "ENETUNREACH"), Map.entry(ENOBUFS, "ENOBUFS"),
            Map.entry(113, "EHOSTUNREACH"));

    private Errno() {
    }

    /** {@return the symbolic name of {@code errno}}, e.g. {@code ENODEV}. */
    public static String name(int errno) {
        return NAMES.getOrDefault(errno, "E" + errno);
    }

    /** {@return libc's description of {@code errno}}, e.g. "No such device". */
    public static String describe(int errno) {
        String s = LibC.INSTANCE.strerror(errno);
        return s == null ? "errno " + errno : s;
    }
}
