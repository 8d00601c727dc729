package calico.dataplane.bpf;

import com.sun.jna.Native;

/** The one libbpf handle of this package (loaded on first use), and the rule for reading its errors. */
final class BpfCalls {

    private BpfCalls() {
    }

    private static final class Holder {
        static final LibBpf LIB = LibBpf.load();
    }

    static LibBpf lib() {
        return Holder.LIB;
    }

    /**
     * {@return the positive errno of a failed call}: {@code -rc} when libbpf returned it, else the
     * errno JNA kept for this thread; call it right after the failed call.
     */
    static int errno(int rc) {
        if (rc < -1) {
            return -rc;
        }
        int e = Native.getLastError();
        return e != 0 ? e : -rc;
    }
}
