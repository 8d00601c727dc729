package calico.dataplane.nft;

import calico.dataplane.netlink.Errno;
import calico.dataplane.netlink.NetlinkException;
import calico.dataplane.netlink.NftablesSocket;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One libnftables context, driven with JSON documents.
 *
 * <p><b>Threading and network namespace.</b> A context is not thread-safe, and its netlink
 * socket acts on the network namespace of the thread that uses it. So a context is confined to
 * the thread that opened it: every call from another thread fails with
 * {@link IllegalStateException}. Open it on the thread (in the namespace) that will program
 * the dataplane, and close it there.
 *
 * <p><b>Transactions.</b> {@link #apply} sends the whole batch as one document; libnftables
 * turns it into one netlink batch, which the kernel commits atomically or not at all.
 */
public final class Nftables implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Nftables.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final LibNftables lib;
    private final Thread owner;
    private final calico.dataplane.calls.ToolCalls calls;
    /** The context of real commits and listings; replaced after a failed commit. */
    private Pointer ctx;

    /** Whether {@link #apply} may send a batch as netlink messages of our own ({@link NftNetlink}). */
    private final boolean netlink;
    /** The socket of those batches, opened at the first one. */
    private NftablesSocket socket;
    /** Batches the kernel took as our netlink messages. */
    private long netlinkBatches;

    private Nftables(LibNftables lib, Pointer ctx, calico.dataplane.calls.ToolCalls calls, boolean netlink) {
        this.lib = lib;
        this.ctx = ctx;
        this.netlink = netlink;
        this.owner = Thread.currentThread();
        this.calls = java.util.Objects.requireNonNull(calls, "calls");
    }

    /** Opens a context bound to the calling thread (and so to its network namespace). */
    public static Nftables open() {
        return open(calico.dataplane.calls.ToolCalls.NONE, false);
    }

    /** As {@link #open()}; {@code calls} hears every commit and listing (dry runs are not commits). */
    public static Nftables open(calico.dataplane.calls.ToolCalls calls) {
        return open(calls, false);
    }

    /** As {@link #open(calico.dataplane.calls.ToolCalls, boolean)}, heard by nobody. */
    public static Nftables open(boolean netlink) {
        return open(calico.dataplane.calls.ToolCalls.NONE, netlink);
    }

    /**
     * Opens a context bound to the calling thread (and so to its network namespace).
     *
     * @param calls   hears every commit and listing (dry runs are not commits)
     * @param netlink whether a batch whose every command {@link NftNetlink} can encode goes to the
     *                kernel as netlink messages of our own, without libnftables (invariant 8 of
     *                {@code nftables.md}); anything else, and listings, go through libnftables
     */
    public static Nftables open(calico.dataplane.calls.ToolCalls calls, boolean netlink) {
        LibNftables lib = Holder.LIB;
        return new Nftables(lib, newContext(lib), calls, netlink);
    }

    private static Pointer newContext(LibNftables lib) {
        Pointer ctx = lib.nft_ctx_new(0);
        if (ctx == null) {
            throw new IllegalStateException("nft_ctx_new failed");
        }
        // The trap: without the JSON output flag, libnftables 1.0.6 parses input as nft syntax
        // and rejects every JSON document.
        lib.nft_ctx_output_set_flags(ctx, LibNftables.NFT_CTX_OUTPUT_JSON);
        if (lib.nft_ctx_buffer_output(ctx) != 0 || lib.nft_ctx_buffer_error(ctx) != 0) {
            lib.nft_ctx_free(ctx);
            throw new IllegalStateException("cannot buffer libnftables output");
        }
        return ctx;
    }

    /**
     * Applies every command of {@code batch} in one kernel transaction. On failure nothing of the
     * batch is applied, and the exception names the first rejected command (found by replaying
     * prefixes of the batch in dry-run mode, which the kernel checks and then aborts).
     *
     * @throws NftablesException when libnftables or the kernel rejects the batch
     */
    public void apply(NftBatch batch) {
        checkOpen();
        if (batch.isEmpty()) {
            return;
        }
        long t0 = System.nanoTime();
        OwnMessages own = netlink ? applyNetlink(batch, t0) : OwnMessages.NOT_ENCODED;
        if (own == OwnMessages.SENT) {
            return;
        }
        // nft syntax where every command has it: libnftables parses and evaluates it in ~60 % of
        // the time the same batch takes as JSON; the JSON document stays for the error path.
        String text = batch.toNft();
        String document = text != null ? text : batch.toJson();
        long t1 = System.nanoTime();
        Run r;
        if (text != null) {
            lib.nft_ctx_output_set_flags(ctx, 0); // input is parsed as nft syntax without the JSON flag
            try {
                r = run(ctx, text, false);
            } finally {
                lib.nft_ctx_output_set_flags(ctx, LibNftables.NFT_CTX_OUTPUT_JSON);
            }
        } else {
            r = run(ctx, document, false);
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("nftables: {} commands, {} bytes of {}: joined in {} µs, libnftables and the kernel {} µs",
                    batch.size(), document.length(), text != null ? "nft syntax" : "JSON", (t1 - t0) / 1_000,
                    (System.nanoTime() - t1) / 1_000);
        }
        calls.nftCommit(batch.size(), r.status == 0, false);
        if (r.status == 0) {
            if (own == OwnMessages.REFUSED) {
                // The kernel took from libnftables what it refused as our messages: our encoding differs.
                LOG.warn("nftables: a batch of {} commands the kernel refused as felix's own netlink messages was "
                        + "accepted through libnftables (an encoder bug): {}", batch.size(), batch.toNft());
            }
            return;
        }
        // A context whose commit failed (or that ran a dry run) keeps a cache that no longer
        // matches the kernel: libnftables 1.0.6 then rejects valid batches ("File exists"). The
        // next batch gets a fresh context, and every dry run below one of its own.
        lib.nft_ctx_free(ctx);
        ctx = newContext(lib);
        List<String> commands = batch.texts(); // JSON, also when the batch went as nft syntax
        int bad = firstFailing(commands);
        throw new NftablesException(r.error, NftBatch.joined(commands), bad,
                bad < 0 ? null : NftBatch.parse(commands.get(bad)));
    }

    /** {@return who hears this context's commits and listings} (a second context, e.g. a reader's, tells them too) */
    public calico.dataplane.calls.ToolCalls calls() {
        return calls;
    }

    /** What became of a batch offered to {@link #applyNetlink}. */
    private enum OwnMessages { SENT, NOT_ENCODED, TOO_LARGE, REFUSED }

    /**
     * Sends {@code batch} as our own netlink messages when every command has that form; {@return
     * what became of it}. A batch the kernel refuses this way is sent again through libnftables,
     * which refuses it too and names the command (invariant 4), or (were our encoding wrong)
     * applies it.
     */
    private OwnMessages applyNetlink(NftBatch batch, long t0) {
        List<NftablesSocket.Message> messages = NftNetlink.encode(batch);
        if (messages == null) {
            return OwnMessages.NOT_ENCODED;
        }
        long t1 = System.nanoTime();
        try {
            if (socket == null) {
                socket = new NftablesSocket();
            }
            socket.commit(messages);
            netlinkBatches++;
        } catch (NetlinkException e) {
            LOG.debug("nftables: netlink batch of {} commands refused ({}); sending it through libnftables",
                    batch.size(), e.getMessage());
            // Too large for a send buffer this process may not grow: a refusal of the size, not of our encoding.
            return e.errno() == Errno.EMSGSIZE ? OwnMessages.TOO_LARGE : OwnMessages.REFUSED;
        }
        calls.nftCommit(batch.size(), true, true);
        if (LOG.isDebugEnabled()) {
            LOG.debug("nftables: {} commands as {} netlink messages: encoded in {} µs, the kernel {} µs", batch.size(),
                    messages.size(), (t1 - t0) / 1_000, (System.nanoTime() - t1) / 1_000);
        }
        return OwnMessages.SENT;
    }

    /** {@return how many batches {@link #apply} sent as our own netlink messages} (for tests and benches) */
    public long netlinkBatches() {
        return netlinkBatches;
    }

    /** {@return whether the kernel would accept {@code batch}}: a dry run, validated and then aborted. */
    public boolean check(NftBatch batch) {
        checkOpen();
        return batch.isEmpty() || dryRun(batch.toJson()).status == 0;
    }

    /** {@return {@code list ruleset} as parsed JSON: {@code {"nftables":[{"metainfo":...}, ...]}}} */
    public JsonNode listRuleset() {
        return list(JSON.objectNode().set("ruleset", NullNode.instance));
    }

    /** {@return {@code list table} with its chains, rules, sets and maps} */
    public JsonNode listTable(TableRef table) {
        ObjectNode t = JSON.objectNode().put("family", table.family()).put("name", table.name());
        return list(JSON.objectNode().set("table", t));
    }

    /**
     * {@code list table}, each element of the listing's {@code nftables} array handed to {@code items} as it is
     * parsed: a whole table's tree is never built (at 70,000 rules it held ~250 MiB of heap; the elements are
     * small and short-lived). Nothing is handed on when the listing is empty.
     */
    public void listTable(TableRef table, Consumer<JsonNode> items) {
        ObjectNode t = JSON.objectNode().put("family", table.family()).put("name", table.name());
        ObjectNode what = JSON.objectNode().set("table", t);
        String output = listed(what);
        if (output.isBlank()) {
            return;
        }
        try (JsonParser p = MAPPER.createParser(output)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new JsonParseException(p, "a listing is an object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                boolean elements = "nftables".equals(p.currentName());
                JsonToken value = p.nextToken();
                if (!elements || value != JsonToken.START_ARRAY) {
                    p.skipChildren();
                    continue;
                }
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    items.accept(p.readValueAsTree());
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("libnftables printed invalid JSON for a listing of " + table + ": "
                    + e.getMessage(), e);
        }
    }

    /** {@return {@code list chain} with its rules (each with its kernel handle)} */
    public JsonNode listChain(TableRef table, String chain) {
        return list(JSON.objectNode().set("chain", named(table, "chain name", chain)));
    }

    /** {@return {@code list set} with its elements} */
    public JsonNode listSet(TableRef table, String set) {
        return list(JSON.objectNode().set("set", named(table, "set name", set)));
    }

    /** {@return {@code list map} with its elements} */
    public JsonNode listMap(TableRef table, String map) {
        return list(JSON.objectNode().set("map", named(table, "map name", map)));
    }

    /** Frees the context. Idempotent; must run on the owning thread. */
    @Override
    public void close() {
        if (ctx == null) {
            return;
        }
        checkThread();
        lib.nft_ctx_free(ctx);
        ctx = null;
        if (socket != null) {
            socket.close();
            socket = null;
        }
    }

    private JsonNode list(ObjectNode what) {
        String output = listed(what);
        if (output.isBlank()) {
            return MissingNode.getInstance();
        }
        try {
            return MAPPER.readTree(output);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("libnftables printed invalid JSON for a listing of " + what + ": " + output, e);
        }
    }

    /** {@return what libnftables printed for {@code list what}} (blank: nothing) */
    private String listed(ObjectNode what) {
        checkOpen();
        ObjectNode cmd = JSON.objectNode();
        cmd.set("list", what);
        String document = NftBatch.json(List.of(cmd));
        Run r = run(ctx, document, false);
        calls.nftList(r.status == 0);
        if (r.status != 0) {
            throw new NftablesException(r.error, document, 0, cmd);
        }
        return r.output;
    }

    /** Binary search for the shortest failing prefix; a prefix never recovers once it fails. */
    private int firstFailing(List<String> commands) {
        int lo = 0;
        int hi = commands.size() - 1;
        if (dryRun(NftBatch.joined(commands)).status == 0) {
            return -1; // transient failure or one only a real commit shows: report the whole batch
        }
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (dryRun(NftBatch.joined(commands.subList(0, mid + 1))).status != 0) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * A dry run (the kernel checks the batch, then aborts it) in a context of its own: after a dry
     * run, libnftables 1.0.6 may reject the next valid batch on the same context, which made the
     * bisection below name a command that was fine (kernel test: {@code NftablesTest}).
     */
    private Run dryRun(String document) {
        Pointer own = newContext(lib);
        try {
            return run(own, document, true);
        } finally {
            lib.nft_ctx_free(own);
        }
    }

    private Run run(Pointer context, String document, boolean dryRun) {
        lib.nft_ctx_set_dry_run(context, dryRun);
        int status = lib.nft_run_cmd_from_buffer(context, document);
        // Read both buffers every time: reading resets them for the next command.
        String out = lib.nft_ctx_get_output_buffer(context);
        String err = lib.nft_ctx_get_error_buffer(context);
        return new Run(status, out == null ? "" : out, err == null ? "" : err);
    }

    private static ObjectNode named(TableRef table, String field, String name) {
        NftBatch.requireName(field, name);
        return JSON.objectNode().put("family", table.family()).put("table", table.name()).put("name", name);
    }

    private void checkOpen() {
        checkThread();
        if (ctx == null) {
            throw new IllegalStateException("nftables context is closed");
        }
    }

    private void checkThread() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("nftables context belongs to thread " + owner.getName()
                    + " (and its network namespace); called from " + Thread.currentThread().getName());
        }
    }

    private record Run(int status, String output, String error) {
    }

    /** Loads the library on first use, so merely loading this class needs no libnftables. */
    private static final class Holder {
        static final LibNftables LIB = LibNftables.load();
    }
}
