package calico.dataplane.bpf;

import com.sun.jna.Pointer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * The policy program's flow events read from user space: the pinned ring buffer
 * ({@code cali_events2}) and prefix map ({@code cali_prefixes}) of a pin directory, opened by path
 * (no program is loaded), each event handed over with its hits' prefixes. A prefix ID is read
 * once and cached: the driver never reuses an ID for another prefix. Not thread-safe: one thread
 * polls and closes.
 */
public final class FlowEvents implements AutoCloseable {

    private final int ringFd;
    /** The ring's pin as opened (its file key: device and inode). */
    private final Path pin;
    private final Object pinKey;
    private final BpfMap prefixes;
    private final Pointer ring;
    private final LibBpf.SampleCallback callback; // held: libbpf calls it for the ring's life
    private final Map<Integer, String> known = new HashMap<>();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong unknownIds = new AtomicLong();
    private boolean closed;

    private FlowEvents(Path pin, Object pinKey, int ringFd, BpfMap prefixes,
                       BiConsumer<PolicyMaps.FlowEvent, List<String>> sink) {
        this.pin = pin;
        this.pinKey = pinKey;
        this.ringFd = ringFd;
        this.prefixes = prefixes;
        this.callback = (ctx, data, size) -> {
            if (size < PolicyMaps.EVENT_SIZE) {
                malformed.incrementAndGet();
                return 0;
            }
            PolicyMaps.FlowEvent e = PolicyMaps.decodeEvent(data.getByteArray(0, PolicyMaps.EVENT_SIZE));
            List<String> names = new ArrayList<>();
            for (int id : e.hits()) {
                String p = prefix(id);
                if (p == null) {
                    unknownIds.incrementAndGet();
                } else {
                    names.add(p);
                }
            }
            sink.accept(e, names);
            return 0;
        };
        this.ring = BpfCalls.lib().ring_buffer__new(ringFd, callback, null, null);
        if (ring == null) {
            int errno = BpfCalls.errno(-1);
            BpfFs.LibC.INSTANCE.close(ringFd);
            BpfFs.LibC.INSTANCE.close(prefixes.fd());
            throw new BpfException("ring buffer " + PolicyMaps.EVENTS + ": open", errno);
        }
    }

    /** {@return whether {@code pinDir} holds the pinned flow-event maps} (the eBPF driver runs or ran) */
    public static boolean pinned(Path pinDir) {
        return java.nio.file.Files.exists(pinDir.resolve(PolicyMaps.EVENTS))
                && java.nio.file.Files.exists(pinDir.resolve(PolicyMaps.PREFIXES));
    }

    /** Opens the pinned maps of {@code pinDir}; {@code sink} gets each event and its prefixes, on the polling thread. */
    public static FlowEvents open(Path pinDir, BiConsumer<PolicyMaps.FlowEvent, List<String>> sink) {
        Path pin = pinDir.resolve(PolicyMaps.EVENTS);
        Object key = fileKey(pin);
        int ring = BpfMap.openPinned(pin);
        int pfx;
        try {
            pfx = BpfMap.openPinned(pinDir.resolve(PolicyMaps.PREFIXES));
        } catch (BpfException e) {
            BpfFs.LibC.INSTANCE.close(ring);
            throw e;
        }
        return new FlowEvents(pin, key, ring, new BpfMap(PolicyMaps.PREFIXES, pfx, 4, PolicyMaps.PREFIX_LEN), sink);
    }

    private static Object fileKey(Path p) {
        try {
            return java.nio.file.Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** {@return whether the ring opened is still the one pinned} (false once unpinned or pinned anew) */
    public boolean stillPinned() {
        Object now = fileKey(pin);
        return now != null && now.equals(pinKey);
    }

    private String prefix(int id) {
        String p = known.get(id);
        if (p == null) {
            byte[] v = prefixes.get(PolicyMaps.prefixKey(id));
            if (v != null) {
                p = PolicyMaps.decodePrefix(v);
                known.put(id, p);
            }
        }
        return p;
    }

    /** Hands over every event waiting, waiting up to {@code timeoutMs} for the first; {@return how many} */
    public int poll(int timeoutMs) {
        int n = BpfCalls.lib().ring_buffer__poll(ring, timeoutMs);
        if (n < 0 && BpfCalls.errno(n) != 4) { // EINTR: none this time
            throw new BpfException("ring buffer " + PolicyMaps.EVENTS + ": poll", BpfCalls.errno(n));
        }
        return Math.max(n, 0);
    }

    /** {@return events too short to decode} */
    public long malformed() {
        return malformed.get();
    }

    /** {@return hits whose prefix ID the map did not hold} */
    public long unknownIds() {
        return unknownIds.get();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            BpfCalls.lib().ring_buffer__free(ring);
            BpfFs.LibC.INSTANCE.close(ringFd);
            BpfFs.LibC.INSTANCE.close(prefixes.fd());
        }
    }
}
