package calico.dataplane.bpf;

import com.sun.jna.Memory;

/**
 * {@code BPF_PROG_TEST_RUN} of a tc program: the kernel runs it {@code repeat} times on a copy of
 * one packet, as if {@code ifindex} had it, and reports the verdict and the mean time per run
 * (benchmarks; the interface must exist in the calling thread's namespace).
 */
public final class TestRun {

    /** @param verdict the program's return code ({@code TC_ACT_OK} 0, {@code TC_ACT_SHOT} 2), @param nanos mean ns per run */
    public record Result(int verdict, int nanos) {
    }

    /** {@code struct __sk_buff} up to and including {@code ifindex} (offset 40): the fields a test run may set. */
    private static final int SKB_CTX_SIZE = 192;
    private static final int SKB_IFINDEX = 40;

    private TestRun() {
    }

    public static Result run(int progFd, byte[] packet, int ifindex, int repeat) {
        Memory data = new Memory(packet.length);
        data.write(0, packet, 0, packet.length);
        Memory ctx = new Memory(SKB_CTX_SIZE);
        ctx.clear();
        ctx.setInt(SKB_IFINDEX, ifindex);
        Memory opts = new Memory(LibBpf.TEST_RUN_OPTS_SIZE);
        opts.clear();
        opts.setLong(0, LibBpf.TEST_RUN_OPTS_SIZE);
        opts.setPointer(8, data);
        opts.setInt(24, packet.length);
        opts.setPointer(32, ctx);
        opts.setInt(48, SKB_CTX_SIZE);
        opts.setInt(60, repeat);
        int rc = BpfCalls.lib().bpf_prog_test_run_opts(progFd, opts);
        if (rc != 0) {
            throw new BpfException("BPF_PROG_TEST_RUN of program fd " + progFd + " on ifindex " + ifindex,
                    BpfCalls.errno(rc));
        }
        return new Result(opts.getInt(56), opts.getInt(64));
    }
}
