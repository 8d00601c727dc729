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
 * no qdisc, run before any tc filter. Links are pinned (one file per interface and hook), so they
 * outlive felix, and held open while felix runs ({@link TcxLinks}). libbpf 1.1 has no tcx API,
 * but its {@code bpf_link_create} is the raw {@code BPF_LINK_CREATE} syscall with the attach type
 * passed through.
 */
public final class Tcx {

    /** {@code enum bpf_attach_type}'s {@code BPF_TCX_INGRESS} and {@code BPF_TCX_EGRESS} (not in libbpf 1.1's headers). */
    static final int BPF_TCX_INGRESS = 46;
    static final int BPF_TCX_EGRESS = 47;
    /** {@code struct bpf_link_info}: id at 4, prog_id at 8, the tcx union's ifindex at 16. */
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
     * Takes the link pinned at {@code pin} off its hook at once ({@code BPF_LINK_DETACH}, what
     * {@code bpftool link detach} does); the link stays pinned, attached to nothing.
     *
     * @throws BpfException when nothing is pinned there or the kernel refuses
     */
    public static void detachLink(Path pin) {
        int link = BpfCalls.lib().bpf_obj_get(pin.toString());
        if (link < 0) {
            throw new BpfException("tcx: open the link pinned at " + pin, BpfCalls.errno(link));
        }
        try {
            int rc = BpfCalls.lib().bpf_link_detach(link);
            if (rc != 0) {
                throw new BpfException("tcx: detach the link pinned at " + pin, BpfCalls.errno(rc));
            }
        } finally {
            BpfFs.LibC.INSTANCE.close(link);
        }
    }

    /** {@return the ID of the program in the link pinned at {@code pin}}, empty when there is none or it is not on {@code ifindex} */
    public static OptionalInt attachedProgramId(Path pin, int ifindex) {
        return pinned(pin).filter(l -> l.ifindex() == ifindex).map(l -> OptionalInt.of(l.programId()))
                .orElse(OptionalInt.empty());
    }

    /** A link as the kernel reports it: its ID, its program, and its interface (0 once detached or the interface gone). */
    public record LinkState(int id, int programId, int ifindex) {
    }

    /** {@return the link pinned at {@code pin}}, empty when nothing is pinned there */
    public static java.util.Optional<LinkState> pinned(Path pin) {
        if (!Files.exists(pin)) {
            return java.util.Optional.empty();
        }
        int link = BpfCalls.lib().bpf_obj_get(pin.toString());
        if (link < 0) {
            return java.util.Optional.empty();
        }
        try {
            return state(link);
        } finally {
            BpfFs.LibC.INSTANCE.close(link);
        }
    }

    /** {@return the state of the link open as {@code linkFd}}, empty when the kernel does not say */
    static java.util.Optional<LinkState> state(int linkFd) {
        Memory info = linkInfo(linkFd);
        return info == null ? java.util.Optional.empty()
                : java.util.Optional.of(new LinkState(info.getInt(4), info.getInt(8), info.getInt(16)));
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

    private static Memory linkInfo(int link) {
        Memory info = new Memory(LINK_INFO_SIZE);
        info.clear();
        IntByReference len = new IntByReference(LINK_INFO_SIZE);
        return BpfCalls.lib().bpf_obj_get_info_by_fd(link, info, len) == 0 ? info : null;
    }

    static boolean delete(Path pin) {
        try {
            return Files.deleteIfExists(pin);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the tcx link pin " + pin, e);
        }
    }
}
