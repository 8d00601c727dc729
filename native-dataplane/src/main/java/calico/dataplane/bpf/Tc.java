package calico.dataplane.bpf;

import com.sun.jna.Memory;
import java.util.OptionalInt;

/**
 * tc classifiers through libbpf ({@code bpf_tc_*}, netlink in the calling thread's network
 * namespace): a {@code clsact} qdisc on the interface and one direct-action BPF filter per
 * direction at our fixed handle and priority, replaced in place on a re-attach (no moment
 * without a program). Kernels with tcx (6.6 and later) take {@link Tcx} links instead, unless felix is told tc.
 */
public final class Tc {

    /** Our filter's handle and priority on every hook (Calico's felix uses its own; these are ours). */
    public static final int HANDLE = 0xca11;
    public static final int PRIORITY = 1;

    private Tc() {
    }

    /**
     * Creates the interface's {@code clsact} qdisc (both hooks); one that exists already is fine
     * (libbpf then logs the kernel's "Exclusivity flag on": callers that know it is there skip this).
     *
     * @throws BpfException naming the interface and the program it is for
     */
    public static void createHooks(int ifindex, String ifName, String program) {
        int rc = BpfCalls.lib().bpf_tc_hook_create(hook(ifindex, LibBpf.BPF_TC_INGRESS | LibBpf.BPF_TC_EGRESS));
        if (rc != 0) {
            int errno = BpfCalls.errno(rc);
            if (errno != BpfException.Errno.EEXIST) {
                throw new BpfException("tc: clsact qdisc on " + ifName + " (ifindex " + ifindex + ") for program "
                        + program, errno);
            }
        }
    }

    /**
     * Attaches {@code progFd} to {@code ifindex}'s hook {@code dir} (its clsact qdisc must exist:
     * {@link #createHooks}), replacing our earlier filter there.
     *
     * @param ifName  the interface's name, for the message only
     * @param program the program's name, for the message only
     * @throws BpfException naming the interface and the program
     */
    public static void attach(int ifindex, String ifName, TcDirection dir, int progFd, String program) {
        Memory opts = opts();
        opts.setInt(8, progFd);
        opts.setInt(12, LibBpf.BPF_TC_F_REPLACE);
        int rc = BpfCalls.lib().bpf_tc_attach(hook(ifindex, dir.attachPoint), opts);
        if (rc != 0) {
            throw new BpfException("tc: attaching program " + program + " to " + ifName + " (ifindex " + ifindex
                    + ") " + dir.name().toLowerCase(java.util.Locale.ROOT), BpfCalls.errno(rc));
        }
    }

    /** {@return whether our filter was there} and removes it; a missing interface or qdisc counts as absent. */
    public static boolean detach(int ifindex, TcDirection dir) {
        int rc = BpfCalls.lib().bpf_tc_detach(hook(ifindex, dir.attachPoint), opts());
        if (rc == 0) {
            return true;
        }
        int errno = BpfCalls.errno(rc);
        if (errno == BpfException.Errno.ENOENT || errno == BpfException.Errno.EINVAL || errno == 19 /* ENODEV */) {
            return false;
        }
        throw new BpfException("tc: detaching from ifindex " + ifindex + " " + dir, errno);
    }

    /** {@return the ID of the program at our filter on the hook}, empty when there is none. */
    public static OptionalInt attachedProgramId(int ifindex, TcDirection dir) {
        Memory opts = opts();
        int rc = BpfCalls.lib().bpf_tc_query(hook(ifindex, dir.attachPoint), opts);
        if (rc != 0) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(opts.getInt(16));
    }

    private static Memory hook(int ifindex, int attachPoint) {
        Memory hook = new Memory(LibBpf.TC_HOOK_SIZE);
        hook.clear();
        hook.setLong(0, LibBpf.TC_HOOK_SIZE);
        hook.setInt(8, ifindex);
        hook.setInt(12, attachPoint);
        return hook;
    }

    private static Memory opts() {
        Memory opts = new Memory(LibBpf.TC_OPTS_SIZE);
        opts.clear();
        opts.setLong(0, LibBpf.TC_OPTS_SIZE);
        opts.setInt(20, HANDLE);
        opts.setInt(24, PRIORITY);
        return opts;
    }
}
