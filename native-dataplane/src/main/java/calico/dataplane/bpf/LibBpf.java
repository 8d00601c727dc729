package calico.dataplane.bpf;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.Map;

/**
 * The libbpf 1.1 entry points we use (bpf/libbpf.h, bpf/bpf.h). libbpf 1.x returns {@code -errno}
 * from int functions and {@code NULL} (errno set) from pointer ones; errno is read with
 * {@link Native#getLastError()} on the same thread. Structs are passed as {@link Memory} laid out
 * by hand: x86-64 offsets of libbpf 1.1's headers (printed with {@code offsetof} when written; a
 * wrong one makes every attach or load in {@code PolicyProgramTest} fail).
 */
interface LibBpf extends Library {

    /** Loaded on first use; Debian ships the versioned name with the runtime package. */
    static LibBpf load() {
        Map<String, Object> options = Map.of(Library.OPTION_STRING_ENCODING, "UTF-8");
        try {
            return Native.load("bpf", LibBpf.class, options);
        } catch (UnsatisfiedLinkError first) {
            try {
                return Native.load("/usr/lib/x86_64-linux-gnu/libbpf.so.1", LibBpf.class, options);
            } catch (UnsatisfiedLinkError second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    // struct bpf_object_open_opts (80 bytes)
    int OPEN_OPTS_SIZE = 80;
    int OPEN_OPTS_OBJECT_NAME = 8;
    int OPEN_OPTS_PIN_ROOT_PATH = 24;

    // struct bpf_tc_hook (24 bytes): sz, ifindex @8, attach_point @12, parent @16
    int TC_HOOK_SIZE = 24;
    // struct bpf_tc_opts (32 bytes): sz, prog_fd @8, flags @12, prog_id @16, handle @20, priority @24
    int TC_OPTS_SIZE = 32;
    int BPF_TC_INGRESS = 1;
    int BPF_TC_EGRESS = 2;
    int BPF_TC_F_REPLACE = 1;

    // struct bpf_test_run_opts (libbpf 1.1: 80 bytes)
    int TEST_RUN_OPTS_SIZE = 80;

    Pointer bpf_object__open_mem(Pointer buf, long size, Pointer opts);

    int bpf_object__load(Pointer obj);

    void bpf_object__close(Pointer obj);

    Pointer bpf_object__find_program_by_name(Pointer obj, String name);

    int bpf_program__fd(Pointer prog);

    Pointer bpf_object__next_program(Pointer obj, Pointer prev);

    String bpf_program__name(Pointer prog);

    int bpf_program__set_log_buf(Pointer prog, Pointer buf, long size);

    Pointer bpf_object__find_map_by_name(Pointer obj, String name);

    int bpf_map__fd(Pointer map);

    int bpf_map__key_size(Pointer map);

    int bpf_map__value_size(Pointer map);

    int bpf_map_update_elem(int fd, byte[] key, byte[] value, long flags);

    int bpf_map_lookup_elem(int fd, byte[] key, byte[] value);

    int bpf_map_delete_elem(int fd, byte[] key);

    int bpf_map_get_next_key(int fd, byte[] key, byte[] nextKey);

    /** {@code BPF_MAP_UPDATE_BATCH}: {@code count} keys and values, packed; {@code count} becomes how many were done. */
    int bpf_map_update_batch(int fd, Pointer keys, Pointer values, com.sun.jna.ptr.IntByReference count, Pointer opts);

    /** {@code BPF_MAP_DELETE_BATCH}: {@code count} packed keys; {@code count} becomes how many were done. */
    int bpf_map_delete_batch(int fd, Pointer keys, com.sun.jna.ptr.IntByReference count, Pointer opts);

    /** {@code BPF_LINK_CREATE}: libbpf 1.1 passes an attach type it does not know (tcx's) through to the kernel. */
    int bpf_link_create(int progFd, int targetFd, int attachType, Pointer opts);

    /** {@code BPF_LINK_UPDATE}: the link's program replaced in place. */
    int bpf_link_update(int linkFd, int newProgFd, Pointer opts);

    /** {@code BPF_LINK_DETACH}: the link leaves its hook at once (it stays open and pinned, attached to nothing). */
    int bpf_link_detach(int linkFd);

    int bpf_obj_pin(int fd, String pathname);

    int bpf_prog_get_fd_by_id(int id);

    int bpf_prog_query(int targetFd, int attachType, int queryFlags, Pointer attachFlags, Pointer progIds,
                       com.sun.jna.ptr.IntByReference progCount);

    int bpf_tc_hook_create(Pointer hook);

    int bpf_tc_attach(Pointer hook, Pointer opts);

    int bpf_tc_detach(Pointer hook, Pointer opts);

    int bpf_tc_query(Pointer hook, Pointer opts);

    int bpf_prog_test_run_opts(int progFd, Pointer opts);

    String libbpf_strerror_r(int err, byte[] buf, long size);

    int bpf_obj_get(String pathname);

    int bpf_map__set_max_entries(Pointer map, int maxEntries);

    /** struct bpf_map_info: type, id, key_size, value_size, max_entries @16, … (80 bytes in 6.x headers). */
    int bpf_obj_get_info_by_fd(int fd, Pointer info, com.sun.jna.ptr.IntByReference len);

    int MAP_INFO_SIZE = 88;
    int MAP_INFO_MAX_ENTRIES = 16;

    /** {@code ring_buffer_sample_fn}: one record; a non-zero return stops the poll. */
    interface SampleCallback extends com.sun.jna.Callback {
        int invoke(Pointer ctx, Pointer data, long size);
    }

    Pointer ring_buffer__new(int mapFd, SampleCallback sample, Pointer ctx, Pointer opts);

    int ring_buffer__poll(Pointer rb, int timeoutMs);

    void ring_buffer__free(Pointer rb);
}
