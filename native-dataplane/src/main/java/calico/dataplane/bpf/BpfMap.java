package calico.dataplane.bpf;

import com.sun.jna.Memory;
import com.sun.jna.ptr.IntByReference;
import java.util.ArrayList;
import java.util.List;

/**
 * One loaded (or pinned and reused) BPF map, by file descriptor, with its key and value sizes;
 * keys and values are the raw bytes of the C structs ({@link PolicyMaps} encodes them). The
 * descriptor belongs to the {@link BpfObject} that loaded the map.
 */
public final class BpfMap {

    private static final long BPF_ANY = 0;

    private final String name;
    private final int fd;
    private final int keySize;
    private final int valueSize;
    /** Whether the kernel takes batch calls for this map (learnt from the first refusal). */
    private boolean batchUpdates = true;
    private boolean batchDeletes = true;

    BpfMap(String name, int fd, int keySize, int valueSize) {
        this.name = name;
        this.fd = fd;
        this.keySize = keySize;
        this.valueSize = valueSize;
    }

    public String name() {
        return name;
    }

    int fd() {
        return fd;
    }

    /**
     * Runs {@code body} on the map pinned at {@code pin} (opened by path, no object loaded: a
     * tool's or a stranger's view), then closes it.
     */
    public static <T> T withPinned(java.nio.file.Path pin, int keySize, int valueSize,
                                   java.util.function.Function<BpfMap, T> body) {
        int fd = openPinned(pin);
        try {
            return body.apply(new BpfMap(pin.getFileName().toString(), fd, keySize, valueSize));
        } finally {
            BpfFs.LibC.INSTANCE.close(fd);
        }
    }

    /** {@return how many entries the map pinned at {@code pin} can hold} (its {@code max_entries}) */
    public static int pinnedMaxEntries(java.nio.file.Path pin) {
        int fd = openPinned(pin);
        try {
            Memory info = new Memory(LibBpf.MAP_INFO_SIZE);
            info.clear();
            IntByReference len = new IntByReference(LibBpf.MAP_INFO_SIZE);
            int rc = BpfCalls.lib().bpf_obj_get_info_by_fd(fd, info, len);
            if (rc != 0) {
                throw new BpfException("pinned map " + pin + ": info", BpfCalls.errno(rc));
            }
            return info.getInt(LibBpf.MAP_INFO_MAX_ENTRIES);
        } finally {
            BpfFs.LibC.INSTANCE.close(fd);
        }
    }

    /** {@return a new descriptor of the map pinned at {@code pin}} (the caller closes it) */
    static int openPinned(java.nio.file.Path pin) {
        int fd = BpfCalls.lib().bpf_obj_get(pin.toString());
        if (fd < 0) {
            throw new BpfException("pinned map " + pin + ": open", BpfCalls.errno(fd));
        }
        return fd;
    }

    public int keySize() {
        return keySize;
    }

    public int valueSize() {
        return valueSize;
    }

    /** Creates or replaces the entry. */
    public void put(byte[] key, byte[] value) {
        check(key, keySize, "key");
        check(value, valueSize, "value");
        int rc = BpfCalls.lib().bpf_map_update_elem(fd, key, value, BPF_ANY);
        if (rc != 0) {
            throw new BpfException("map " + name + ": update", BpfCalls.errno(rc));
        }
    }

    /**
     * Creates or replaces the entries {@code keys[i] → values[i]} with one {@code BPF_MAP_UPDATE_BATCH}
     * where the map type has it (hash maps), else one update each (an LPM trie, an older kernel).
     * Not atomic: on a failure the entries before the failing one are written.
     */
    public void putAll(List<byte[]> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("map " + name + ": " + keys.size() + " keys, " + values.size() + " values");
        }
        int done = 0;
        if (batchUpdates && keys.size() > 1) {
            IntByReference count = new IntByReference(keys.size());
            int rc = BpfCalls.lib().bpf_map_update_batch(fd, packed(keys, keySize, "key"),
                    packed(values, valueSize, "value"), count, null);
            if (rc == 0) {
                return;
            }
            int errno = BpfCalls.errno(rc);
            if (BpfException.Errno.noBatch(errno)) {
                batchUpdates = false; // the map type has no batch: one call each from now on
            }
            done = Math.max(0, count.getValue());
        }
        for (int i = done; i < keys.size(); i++) {
            put(keys.get(i), values.get(i));
        }
    }

    /**
     * Removes the entries of {@code keys} (absent ones are skipped) with {@code BPF_MAP_DELETE_BATCH}
     * where the map type has it, else one delete each; {@return how many were there}.
     */
    public int deleteAll(List<byte[]> keys) {
        int removed = 0;
        int from = 0;
        while (batchDeletes && keys.size() - from > 1) {
            IntByReference count = new IntByReference(keys.size() - from);
            int rc = BpfCalls.lib().bpf_map_delete_batch(fd, packed(keys.subList(from, keys.size()), keySize, "key"),
                    count, null);
            if (rc == 0) {
                return removed + keys.size() - from;
            }
            int errno = BpfCalls.errno(rc);
            int did = Math.max(0, count.getValue());
            removed += did;
            from += did;
            if (errno == BpfException.Errno.ENOENT && from < keys.size()) {
                from++; // the batch stops at an absent key: skip it, go on with the rest
            } else {
                if (BpfException.Errno.noBatch(errno)) {
                    batchDeletes = false;
                }
                break; // the loop below does the rest, one by one, and names a real error
            }
        }
        for (int i = from; i < keys.size(); i++) {
            if (delete(keys.get(i))) {
                removed++;
            }
        }
        return removed;
    }

    private static Memory packed(List<byte[]> items, int size, String what) {
        Memory m = new Memory((long) items.size() * size);
        long at = 0;
        for (byte[] b : items) {
            if (b.length != size) {
                throw new IllegalArgumentException(what + " of " + b.length + " bytes, needs " + size);
            }
            m.write(at, b, 0, size);
            at += size;
        }
        return m;
    }

    /** {@return whether an entry was there} and removes it. */
    public boolean delete(byte[] key) {
        check(key, keySize, "key");
        int rc = BpfCalls.lib().bpf_map_delete_elem(fd, key);
        if (rc == 0) {
            return true;
        }
        int errno = BpfCalls.errno(rc);
        if (errno == BpfException.Errno.ENOENT) {
            return false;
        }
        throw new BpfException("map " + name + ": delete", errno);
    }

    /** {@return the value, or null when there is no entry} */
    public byte[] get(byte[] key) {
        check(key, keySize, "key");
        byte[] value = new byte[valueSize];
        int rc = BpfCalls.lib().bpf_map_lookup_elem(fd, key, value);
        if (rc == 0) {
            return value;
        }
        int errno = BpfCalls.errno(rc);
        if (errno == BpfException.Errno.ENOENT) {
            return null;
        }
        throw new BpfException("map " + name + ": lookup", errno);
    }

    /** {@return every key} (a snapshot; concurrent writers may add or remove entries meanwhile) */
    public List<byte[]> keys() {
        List<byte[]> out = new ArrayList<>();
        byte[] key = null;
        while (true) {
            byte[] next = new byte[keySize];
            int rc = BpfCalls.lib().bpf_map_get_next_key(fd, key, next);
            if (rc != 0) {
                int errno = BpfCalls.errno(rc);
                if (errno == BpfException.Errno.ENOENT) {
                    return out;
                }
                throw new BpfException("map " + name + ": next key", errno);
            }
            out.add(next);
            key = next;
        }
    }

    private void check(byte[] b, int size, String what) {
        if (b.length != size) {
            throw new IllegalArgumentException("map " + name + ": " + what + " of " + b.length + " bytes, needs " + size);
        }
    }

    @Override
    public String toString() {
        return name + " (fd " + fd + ")";
    }
}
