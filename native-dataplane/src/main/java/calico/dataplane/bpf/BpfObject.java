package calico.dataplane.bpf;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A BPF ELF object opened from bytes and loaded into the kernel through libbpf: its programs by
 * name (file descriptors to attach) and its maps. Maps declared with {@code LIBBPF_PIN_BY_NAME}
 * are pinned under {@code pinRoot} (and an existing compatible pin is reused, so their contents
 * survive a reload). Closing releases our descriptors; attached programs and pinned maps stay.
 */
public final class BpfObject implements AutoCloseable {

    /** Verifier log kept for a failed load; the tail goes into the exception. */
    private static final int LOG_SIZE = 1 << 20;
    private static final int LOG_TAIL = 2_000;

    private final String name;
    private final Pointer obj;
    private final Map<String, BpfMap> maps = new HashMap<>();
    private boolean closed;

    private BpfObject(String name, Pointer obj) {
        this.name = name;
        this.obj = obj;
    }

    /**
     * Opens and loads {@code elf}.
     *
     * @param name    the object's name in messages (e.g. the resource it came from)
     * @param pinRoot where pinned maps live (a directory on a bpffs), or null to pin nothing
     * @throws BpfException naming the object and carrying the verifier log's tail when the kernel refuses a program
     */
    public static BpfObject load(String name, byte[] elf, Path pinRoot) {
        return load(name, elf, pinRoot, Map.of());
    }

    /**
     * Opens and loads {@code elf} with those of its maps named in {@code maxEntries} sized so. A pinned map of
     * another size cannot be reused: its pin is removed first and the map made anew (its entries lost).
     */
    public static BpfObject load(String name, byte[] elf, Path pinRoot, Map<String, Integer> maxEntries) {
        LibBpf lib = BpfCalls.lib();
        Memory buf = new Memory(elf.length);
        buf.write(0, elf, 0, elf.length);
        Memory opts = new Memory(LibBpf.OPEN_OPTS_SIZE);
        opts.clear();
        opts.setLong(0, LibBpf.OPEN_OPTS_SIZE);
        Memory objectName = cString(name);
        opts.setPointer(LibBpf.OPEN_OPTS_OBJECT_NAME, objectName);
        Memory pin = pinRoot == null ? null : cString(pinRoot.toString());
        opts.setPointer(LibBpf.OPEN_OPTS_PIN_ROOT_PATH, pin);
        Pointer obj = lib.bpf_object__open_mem(buf, elf.length, opts);
        if (obj == null) {
            throw new BpfException("BPF object " + name + ": open", BpfCalls.errno(-1));
        }
        for (Map.Entry<String, Integer> e : maxEntries.entrySet()) {
            Pointer m = lib.bpf_object__find_map_by_name(obj, e.getKey());
            if (m == null) {
                continue; // an object without that map (a test's): nothing to size
            }
            int rc = lib.bpf_map__set_max_entries(m, e.getValue());
            if (rc != 0) {
                lib.bpf_object__close(obj);
                throw new BpfException("BPF object " + name + ": map " + e.getKey() + " cannot be sized "
                        + e.getValue(), BpfCalls.errno(rc));
            }
            if (pinRoot != null) {
                removePinOfOtherSize(pinRoot.resolve(e.getKey()), e.getValue());
            }
        }
        // A log buffer per program: libbpf asks the kernel for a log only when a load fails, so
        // the program whose buffer is written is the one the verifier refused.
        Map<String, Memory> logs = new LinkedHashMap<>();
        for (Pointer p = lib.bpf_object__next_program(obj, null); p != null; p = lib.bpf_object__next_program(obj, p)) {
            Memory log = new Memory(LOG_SIZE);
            log.setByte(0, (byte) 0);
            lib.bpf_program__set_log_buf(p, log, LOG_SIZE);
            logs.put(lib.bpf_program__name(p), log);
        }
        int rc = lib.bpf_object__load(obj);
        if (rc != 0) {
            int errno = BpfCalls.errno(rc);
            StringBuilder why = new StringBuilder("BPF object " + name + ": load refused");
            logs.forEach((program, log) -> {
                String verifier = tail(log.getString(0, StandardCharsets.UTF_8.name()));
                if (!verifier.isEmpty()) {
                    why.append("; program ").append(program).append(", verifier log (last lines):\n")
                            .append(verifier).append('\n');
                }
            });
            lib.bpf_object__close(obj);
            throw new BpfException(why.toString(), errno);
        }
        // keep the buffers reachable until here: libbpf reads them during open and load
        java.lang.ref.Reference.reachabilityFence(objectName);
        java.lang.ref.Reference.reachabilityFence(pin);
        java.lang.ref.Reference.reachabilityFence(buf);
        java.lang.ref.Reference.reachabilityFence(opts);
        java.lang.ref.Reference.reachabilityFence(logs);
        return new BpfObject(name, obj);
    }

    /** Removes the map pinned at {@code pin} when its size is not {@code maxEntries} (none there: nothing). */
    private static void removePinOfOtherSize(Path pin, int maxEntries) {
        if (java.nio.file.Files.exists(pin) && BpfMap.pinnedMaxEntries(pin) != maxEntries) {
            try {
                java.nio.file.Files.delete(pin);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot remove " + pin, e);
            }
        }
    }

    /** {@return the descriptor of the loaded program {@code program}} */
    public int programFd(String program) {
        ensureOpen();
        Pointer p = BpfCalls.lib().bpf_object__find_program_by_name(obj, program);
        if (p == null) {
            throw new BpfException("BPF object " + name + ": no program " + program, BpfException.Errno.ENOENT);
        }
        int fd = BpfCalls.lib().bpf_program__fd(p);
        if (fd < 0) {
            throw new BpfException("BPF object " + name + ": program " + program + " not loaded", BpfCalls.errno(fd));
        }
        return fd;
    }

    /** {@return the map {@code map}} */
    public synchronized BpfMap map(String map) {
        ensureOpen();
        return maps.computeIfAbsent(map, m -> {
            Pointer p = BpfCalls.lib().bpf_object__find_map_by_name(obj, m);
            if (p == null) {
                throw new BpfException("BPF object " + name + ": no map " + m, BpfException.Errno.ENOENT);
            }
            int fd = BpfCalls.lib().bpf_map__fd(p);
            if (fd < 0) {
                throw new BpfException("BPF object " + name + ": map " + m + " not created", BpfCalls.errno(fd));
            }
            return new BpfMap(m, fd, BpfCalls.lib().bpf_map__key_size(p), BpfCalls.lib().bpf_map__value_size(p));
        });
    }

    public String name() {
        return name;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("BPF object " + name + " is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            BpfCalls.lib().bpf_object__close(obj);
        }
    }

    private static Memory cString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        Memory m = new Memory(b.length + 1L);
        m.write(0, b, 0, b.length);
        m.setByte(b.length, (byte) 0);
        return m;
    }

    /** The last {@value #LOG_TAIL} characters of a log, cut at a line start. */
    static String tail(String log) {
        String t = log.strip();
        if (t.length() <= LOG_TAIL) {
            return t;
        }
        t = t.substring(t.length() - LOG_TAIL);
        int nl = t.indexOf('\n');
        return nl >= 0 ? t.substring(nl + 1) : t;
    }
}
