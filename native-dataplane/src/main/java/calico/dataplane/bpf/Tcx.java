package calico.dataplane.bpf;

import com.sun.jna.Memory;
import com.sun.jna.ptr.IntByReference;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * tcx (kernel 6.6 and later): a program on an interface's ingress or egress hook as a BPF link,
 * no qdisc, run before any tc filter. The link is pinned (one file per interface and hook), so
 * it outlives felix: a restarted felix replaces the program in the pinned link
 * ({@code BPF_LINK_UPDATE}, no moment without one), and removing the pin detaches it. libbpf 1.1
 * has no tcx API, but its {@code bpf_link_create} is the raw {@code BPF_LINK_CREATE} syscall with
 * the attach type passed through.
 */
public final class Tcx {

    /** {@code enum bpf_attach_type}'s {@code BPF_TCX_INGRESS} and {@code BPF_TCX_EGRESS} (not in libbpf 1.1's headers). */
    static final int BPF_TCX_INGRESS = 46;
    static final int BPF_TCX_EGRESS = 47;
    /** {@code struct bpf_link_info}: prog_id at 8, the tcx union's ifindex at 16. */
    private static final int LINK_INFO_SIZE = 64;

    private Tcx() {
    }

    /** {@return whether this kernel has tcx}: a query of {@code lo}'s tcx ingress hook, which older kernels refuse */
    public static boolean available() {
        IntByReference count = new IntByReference(0);
        return BpfCalls.lib().bpf_prog_query(1, BPF_TCX_INGRESS, 0, null, null, count) == 0;
    }

    /**
     * {@return the pin of our link on {@code ifName}'s hook {@code dir}} under {@code linkDir}:
     * {@code <ifName>_ingress} or {@code _egress}, a dot of the name (a VLAN's) as a colon (bpffs
     * refuses dots in names; interface names never hold a colon)
     */
    public static Path pin(Path linkDir, String ifName, TcDirection dir) {
        return linkDir.resolve(ifName.replace('.', ':') + (dir == TcDirection.INGRESS ? "_ingress" : "_egress"));
    }

    /** {@return the interface name a pin of {@link #pin} is for}, empty for another name */
    public static java.util.Optional<String> interfaceOf(Path pin) {
        String name = pin.getFileName().toString();
        for (String suffix : new String[] {"_ingress", "_egress"}) {
            if (name.endsWith(suffix) && name.length() > suffix.length()) {
                return java.util.Optional.of(name.substring(0, name.length() - suffix.length()).replace(':', '.'));
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * Puts {@code progFd} on {@code ifindex}'s hook {@code dir}: in place in the link pinned at
     * {@code pin} when that link is on this interface, else as a new link pinned there (a pin of a
     * gone or re-created interface is replaced).
     *
     * @param program the program's name, for the message only
     * @throws BpfException naming the interface and the program
     */
    public static void attach(int ifindex, String ifName, TcDirection dir, int progFd, String program, Path pin) {
        String what = "tcx: attaching program " + program + " to " + ifName + " (ifindex " + ifindex + ") "
                + dir.name().toLowerCase(java.util.Locale.ROOT);
        if (Files.exists(pin)) {
            int link = BpfCalls.lib().bpf_obj_get(pin.toString());
            if (link >= 0) {
                try {
                    if (linkIfindex(link) == ifindex) {
                        int rc = BpfCalls.lib().bpf_link_update(link, progFd, null);
                        if (rc != 0) {
                            throw new BpfException(what + ": update of the pinned link", BpfCalls.errno(rc));
                        }
                        return;
                    }
                } finally {
                    BpfFs.LibC.INSTANCE.close(link);
                }
            }
            delete(pin); // another interface's (a gone one's) link
        }
        int link = BpfCalls.lib().bpf_link_create(progFd, ifindex,
                dir == TcDirection.INGRESS ? BPF_TCX_INGRESS : BPF_TCX_EGRESS, null);
        if (link < 0) {
            throw new BpfException(what, BpfCalls.errno(link));
        }
        try {
            Files.createDirectories(pin.getParent());
            int rc = BpfCalls.lib().bpf_obj_pin(link, pin.toString());
            if (rc != 0) {
                throw new BpfException(what + ": pin " + pin, BpfCalls.errno(rc));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": " + pin.getParent(), e);
        } finally {
            BpfFs.LibC.INSTANCE.close(link); // the pin holds it
        }
    }

    /** {@return whether a link was pinned at {@code pin}} and removes the pin, which detaches it. */
    public static boolean detach(Path pin) {
        return delete(pin);
    }

    /** {@return the ID of the program in the link pinned at {@code pin}}, empty when there is none or its interface is gone. */
    public static OptionalInt attachedProgramId(Path pin, int ifindex) {
        if (!Files.exists(pin)) {
            return OptionalInt.empty();
        }
        int link = BpfCalls.lib().bpf_obj_get(pin.toString());
        if (link < 0) {
            return OptionalInt.empty();
        }
        try {
            Memory info = linkInfo(link);
            return info == null || info.getInt(16) != ifindex ? OptionalInt.empty() : OptionalInt.of(info.getInt(8));
        } finally {
            BpfFs.LibC.INSTANCE.close(link);
        }
    }

    /**
     * {@return the names of the programs on {@code ifindex}'s tcx hook {@code dir}, in run order}
     * (the kernel's view: whoever attached them; empty without tcx)
     */
    public static java.util.List<String> programNames(int ifindex, TcDirection dir) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (int id : programIds(ifindex, dir)) {
            int fd = BpfCalls.lib().bpf_prog_get_fd_by_id(id);
            if (fd < 0) {
                continue; // gone meanwhile
            }
            try {
                Memory info = new Memory(PROG_INFO_SIZE);
                info.clear();
                IntByReference len = new IntByReference(PROG_INFO_SIZE);
                if (BpfCalls.lib().bpf_obj_get_info_by_fd(fd, info, len) == 0) {
                    out.add(info.getString(PROG_INFO_NAME, "US-ASCII"));
                }
            } finally {
                BpfFs.LibC.INSTANCE.close(fd);
            }
        }
        return out;
    }

    /** {@return the IDs of the programs on {@code ifindex}'s tcx hook {@code dir}, in run order} (empty without tcx) */
    public static java.util.List<Integer> programIds(int ifindex, TcDirection dir) {
        int type = dir == TcDirection.INGRESS ? BPF_TCX_INGRESS : BPF_TCX_EGRESS;
        Memory ids = new Memory(4L * 64);
        IntByReference count = new IntByReference(64);
        if (BpfCalls.lib().bpf_prog_query(ifindex, type, 0, null, ids, count) != 0) {
            return java.util.List.of();
        }
        java.util.List<Integer> out = new java.util.ArrayList<>();
        for (int i = 0; i < count.getValue(); i++) {
            out.add(ids.getInt(4L * i));
        }
        return out;
    }

    /** {@code struct bpf_prog_info}: {@code name} (16 bytes) at 64; enough of it to hold the name. */
    private static final int PROG_INFO_SIZE = 96;
    private static final int PROG_INFO_NAME = 64;

    /** {@return the interface the link is on}, 0 when it is gone (the kernel detached the link) */
    private static int linkIfindex(int link) {
        Memory info = linkInfo(link);
        return info == null ? 0 : info.getInt(16);
    }

    private static Memory linkInfo(int link) {
        Memory info = new Memory(LINK_INFO_SIZE);
        info.clear();
        IntByReference len = new IntByReference(LINK_INFO_SIZE);
        return BpfCalls.lib().bpf_obj_get_info_by_fd(link, info, len) == 0 ? info : null;
    }

    private static boolean delete(Path pin) {
        try {
            return Files.deleteIfExists(pin);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the tcx link pin " + pin, e);
        }
    }
}
