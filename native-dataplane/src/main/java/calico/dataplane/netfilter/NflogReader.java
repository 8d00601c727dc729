package calico.dataplane.netfilter;

import calico.dataplane.netlink.Errno;
import calico.dataplane.netlink.NetlinkException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the packets NFLOG rules log ({@code nft ... log group N}, {@code iptables -j NFLOG
 * --nflog-group N}) and hands them, parsed, to a callback on a thread of its own.
 *
 * <p>{@link #open} binds each group on one {@code NETLINK_NETFILTER} socket
 * ({@code NFULNL_CFG_CMD_BIND}) in copy-packet mode with a bounded copy range, and fails,
 * binding nothing, if any group cannot be bound (EPERM: another socket in the namespace reads it). The socket
 * belongs to the network namespace of the thread that calls {@code open}.
 *
 * <p>Nothing that arrives stops the reader: malformed or truncated messages are counted
 * ({@link #malformed()}), a full socket queue (ENOBUFS) is counted ({@link #overruns()}) and
 * logged, packets the kernel failed to deliver are counted from sequence gaps ({@link #lost()}),
 * and a callback that throws is counted ({@link #sinkErrors()}) and logged. {@link #close()}
 * stops the thread, which closes the socket (and so unbinds the groups).
 */
public final class NflogReader implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NflogReader.class);

    private static final int NFULA_CFG_CMD = 1;
    private static final int NFULA_CFG_MODE = 2;
    private static final int NFULA_CFG_NLBUFSIZ = 3;
    private static final int NFULA_CFG_TIMEOUT = 4;
    private static final int NFULA_CFG_QTHRESH = 5;
    private static final int NFULA_CFG_FLAGS = 6;
    private static final int NFULNL_CFG_CMD_BIND = 1;
    private static final int NFULNL_COPY_PACKET = 2;
    private static final int NFULNL_CFG_F_SEQ = 0x1;
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration LOG_EVERY = Duration.ofSeconds(10);

    /**
     * How the kernel batches and copies logged packets.
     *
     * @param copyRange bytes of each packet copied to us: enough for the IP and L4 headers
     * @param kernelBatchBytes size of the kernel's batch buffer per group ({@code NFULA_CFG_NLBUFSIZ})
     * @param queueThreshold packets the kernel batches before sending ({@code NFULA_CFG_QTHRESH})
     * @param flushTimeout longest a logged packet waits in a batch ({@code NFULA_CFG_TIMEOUT}, 10 ms steps)
     * @param socketQueueBytes our socket's receive queue; when full the kernel drops (ENOBUFS)
     */
    public record Options(int copyRange, int kernelBatchBytes, int queueThreshold, Duration flushTimeout,
            int socketQueueBytes) {
        /** 128 bytes: IPv4 with options (60) or IPv6 (40) plus extension headers, and the L4 ports. */
        public static final Options DEFAULT = new Options(128, 64 * 1024, 64, Duration.ofMillis(100), 8 << 20);

        public Options {
            if (copyRange < 40 || copyRange > 65535) {
                throw new IllegalArgumentException("copyRange: " + copyRange + " must be 40..65535 (IPv6 header is 40)");
            }
            if (kernelBatchBytes < 4096 || kernelBatchBytes > 131072) {
                throw new IllegalArgumentException("kernelBatchBytes: " + kernelBatchBytes + " must be 4096..131072");
            }
            if (queueThreshold < 1) {
                throw new IllegalArgumentException("queueThreshold: " + queueThreshold + " must be at least 1");
            }
            if (flushTimeout.isNegative() || flushTimeout.toMillis() > 60_000) {
                throw new IllegalArgumentException("flushTimeout: " + flushTimeout + " must be 0..60s");
            }
            if (socketQueueBytes < 65536) {
                throw new IllegalArgumentException("socketQueueBytes: " + socketQueueBytes + " must be at least 64 KiB");
            }
        }
    }

    private final NfnlSocket socket;
    private final List<Integer> groups;
    private final Consumer<NflogPacket> sink;
    private final NflogDecoder decoder = new NflogDecoder();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long received;
    private volatile long malformed;
    private volatile long lost;
    private volatile long overruns;
    private volatile long socketErrors;
    private volatile long sinkErrors;
    private long lastWarning;

    private NflogReader(NfnlSocket socket, List<Integer> groups, Consumer<NflogPacket> sink) {
        this.socket = socket;
        this.groups = groups;
        this.sink = sink;
        this.thread = new Thread(this::loop, "nflog-reader-" + groups);
        this.thread.setDaemon(true);
    }

    /** Binds {@code groups} with {@link Options#DEFAULT} and starts delivering to {@code sink}. */
    public static NflogReader open(Collection<Integer> groups, Consumer<NflogPacket> sink) {
        return open(groups, Options.DEFAULT, sink);
    }

    /**
     * Binds {@code groups} in the calling thread's network namespace and starts delivering their
     * packets to {@code sink}, which is called on the reader's thread, one packet at a time.
     *
     * @throws NetlinkException if a group cannot be bound (EPERM: another socket in the namespace reads it)
     * @throws IllegalArgumentException for an empty group list or a group outside 0..65535
     */
    public static NflogReader open(Collection<Integer> groups, Options options, Consumer<NflogPacket> sink) {
        List<Integer> sorted = new ArrayList<>(new TreeSet<>(groups));
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("groups: at least one NFLOG group is needed");
        }
        for (int g : sorted) {
            if (g < 0 || g > 65535) {
                throw new IllegalArgumentException("groups: " + g + " is not an NFLOG group (0..65535)");
            }
        }
        NfnlSocket socket = new NfnlSocket("NFLOG " + sorted, 1 << 18, options.socketQueueBytes());
        try {
            for (int g : sorted) {
                bind(socket, g, options);
            }
        } catch (RuntimeException e) {
            socket.close(); // the kernel drops every instance bound to the socket: nothing is left bound
            throw e;
        }
        socket.setReceiveTimeout(POLL);
        NflogReader reader = new NflogReader(socket, List.copyOf(sorted), sink);
        reader.thread.start();
        return reader;
    }

    private static void bind(NfnlSocket socket, int group, Options o) {
        // BIND is per group, whatever the family: one instance receives IPv4 and IPv6 alike.
        // PF_BIND is not sent: it would replace the namespace's default logger for the family,
        // which 'log group N' rules do not use (they name the nfnetlink_log logger themselves).
        NfRequest r = new NfRequest(NflogDecoder.NFNL_SUBSYS_ULOG, NflogDecoder.NFULNL_MSG_CONFIG,
                NfnlSocket.NLM_F_REQUEST | NfnlSocket.NLM_F_ACK, 0, group)
                .attrU8(NFULA_CFG_CMD, NFULNL_CFG_CMD_BIND)
                // struct nfulnl_msg_config_mode (packed): be32 copy_range, u8 copy_mode, u8 pad
                .attr(NFULA_CFG_MODE, ByteBuffer.allocate(6).putInt(o.copyRange()).put((byte) NFULNL_COPY_PACKET).array())
                .attrBe32(NFULA_CFG_NLBUFSIZ, o.kernelBatchBytes())
                .attrBe32(NFULA_CFG_QTHRESH, o.queueThreshold())
                .attrBe32(NFULA_CFG_TIMEOUT, (int) Math.max(0, o.flushTimeout().toMillis() / 10))
                .attrBe16(NFULA_CFG_FLAGS, NFULNL_CFG_F_SEQ);
        try {
            socket.execute("bind NFLOG group " + group, r);
        } catch (NetlinkException e) {
            if (e.errno() == Errno.EPERM) {
                // The kernel's answer when another socket in this namespace holds the group.
                throw new NetlinkException(e.operation(), e.errno(), "another socket in this network namespace reads this group");
            }
            throw e;
        }
    }

    private void loop() {
        long[] badHeaders = {0};
        NfnlSocket.Handler handler = (type, flags, buf, from, to) -> {
            NflogPacket p = decoder.decode(type, buf, from, to, Instant.now());
            if (p != null) {
                // Published before the callback sees the packet, so counters cover what it has seen.
                received = decoder.decoded();
                if (decoder.lost() != lost) {
                    lost = decoder.lost();
                }
                try {
                    sink.accept(p);
                } catch (RuntimeException e) {
                    sinkErrors++;
                    warn("NFLOG callback failed (" + sinkErrors + " so far); going on", e);
                }
            }
        };
        try {
            while (running) {
                long n = socket.receive(handler, badHeaders);
                if (n < 0) {
                    onSocketError((int) -n);
                }
                decoder.countMalformed(badHeaders[0]);
                badHeaders[0] = 0;
                received = decoder.decoded();
                malformed = decoder.malformed();
                lost = decoder.lost();
            }
        } catch (RuntimeException | Error e) {
            log.error("NFLOG reader for groups {} stopped by an unexpected error", groups, e);
            throw e;
        } finally {
            socket.close(); // on this thread: never under a recv blocked elsewhere
        }
    }

    private void onSocketError(int errno) {
        if (errno == Errno.ENOBUFS) {
            overruns++;
            warn("NFLOG socket queue overran (" + overruns + " times so far): the kernel dropped logged packets"
                    + " (counted in lost() from sequence gaps); the reader is slower than the traffic logged", null);
            return;
        }
        socketErrors++;
        warn("NFLOG socket read failed: " + Errno.name(errno) + " (" + Errno.describe(errno) + "); "
                + socketErrors + " errors so far", null);
        try {
            Thread.sleep(100); // a persistent error must not spin a core
        } catch (InterruptedException e) {
            running = false;
        }
    }

    /** Logs at most one warning per 10 s (an overrun tends to repeat for a while). */
    private void warn(String message, Throwable e) {
        long now = System.nanoTime();
        if (lastWarning == 0 || now - lastWarning >= LOG_EVERY.toNanos()) {
            lastWarning = now;
            log.warn(message, e);
        }
    }

    /** {@return the groups this reader bound}, ascending. */
    public List<Integer> groups() {
        return groups;
    }

    /** {@return packets decoded and handed to the callback so far} */
    public long received() {
        return received;
    }

    /** {@return messages that could not be decoded (truncated, not IPv4/IPv6, bad lengths)} */
    public long malformed() {
        return malformed;
    }

    /** {@return packets the kernel logged but could not deliver, from gaps in the groups' sequence numbers} */
    public long lost() {
        return lost;
    }

    /** {@return how often the socket queue overflowed (ENOBUFS): each time, packets were dropped} */
    public long overruns() {
        return overruns;
    }

    /** {@return other socket read errors} */
    public long socketErrors() {
        return socketErrors;
    }

    /** {@return callback invocations that threw} */
    public long sinkErrors() {
        return sinkErrors;
    }

    /** Stops the reader thread (within about 200 ms, unless the callback is blocked) and unbinds the groups. */
    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(POLL.toMillis() * 10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                log.warn("NFLOG reader for groups {} still busy in its callback; it stops after it returns", groups);
            }
        }
    }
}
