package calico.libcalico.datastore.etcd;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.selector.Selector;
import calico.api.validation.FieldError;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.Admission;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchListener;
import com.fasterxml.jackson.databind.JsonNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.DeleteResponse;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.OptionsUtil;
import io.etcd.jetcd.options.PutOption;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code etcdv3} datastore: resources as JSON under Calico's v3 keys (see {@link EtcdKeys}),
 * {@code resourceVersion} = the key's etcd mod revision, every conditional write one etcd
 * transaction. See {@code libcalico/design/datastore.md} for the invariants.
 *
 * <p>Every call is bounded by {@link EtcdConfig#requestTimeout()}; an etcd that does not answer
 * in time, or refuses the connection, gives {@link DatastoreException.Unavailable}. A write that
 * times out may or may not have been applied (etcd's own ambiguity); callers re-read.
 */
public final class EtcdDatastore implements Datastore {

    private static final Logger LOG = LoggerFactory.getLogger(EtcdDatastore.class);

    /** Keys per range request when listing: keeps each response far below gRPC's message limit. */
    static final int LIST_PAGE_SIZE = 500;

    /** Watch responses the transport may deliver ahead of jetcd's one-at-a-time requests (see {@link WatchPrefetch}). */
    static final int WATCH_PREFETCH = 64;

    private static final Comparator<Resource> BY_NAMESPACE_THEN_NAME = Comparator
            .comparing((Resource r) -> r.metadata().namespace(), Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(r -> r.metadata().name());

    private final EtcdConfig config;
    private final Client client;
    private final KV kv;
    private final ResourceCodec codec = ResourceCodec.get();
    private final Admission admission;
    private final Clock clock;
    // One daemon thread asks every watch for progress; jetcd's own threads are never blocked.
    private final ScheduledExecutorService progressTimer;
    private final Set<EtcdWatch> watches = ConcurrentHashMap.newKeySet();
    private final AtomicLong watchIds = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();

    public EtcdDatastore(EtcdConfig config) {
        this(config, ResourceValidator.get(), Clock.systemUTC());
    }

    public EtcdDatastore(EtcdConfig config, ResourceValidator validator, Clock clock) {
        this.config = config;
        this.admission = new Admission(validator);
        this.clock = clock;
        this.client = clientFor(config);
        this.kv = client.getKVClient();
        this.progressTimer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "etcd-watch-progress");
            t.setDaemon(true);
            return t;
        });
    }

    private static Client clientFor(EtcdConfig config) {
        return clientBuilder(config).build();
    }

    /** {@return the jetcd client's settings for {@code config}} (a builder, so that a test can read them) */
    static ClientBuilder clientBuilder(EtcdConfig config) {
        long timeoutMs = config.requestTimeout().toMillis();
        ClientBuilder b = Client.builder()
                .endpoints(config.endpoints())
                // Fail fast while the connection is down instead of queueing calls forever.
                .waitForReady(false)
                .connectTimeout(Duration.ofMillis(Math.min(timeoutMs, 5_000)))
                .retryMaxDuration(config.requestTimeout())
                // Detect a silent etcd (no RST) on long-lived watch streams; etcd's minimum ping interval is 5 s.
                .keepaliveTime(Duration.ofSeconds(10))
                .keepaliveTimeout(Duration.ofSeconds(5))
                // Pings only while a call (a watch) is open, as etcd's Go client does by default: etcd permits
                // none on a connection without streams, and after two answers it with GOAWAY too_many_pings
                // (jetcd's default pings an idle connection too: every idle client was sent away).
                .keepaliveWithoutCalls(false)
                .maxInboundMessageSize(64 * 1024 * 1024)
                .interceptors(interceptors(timeoutMs));
        if (config.tls()) {
            try {
                b.sslContext(ssl -> {
                    if (config.caCertFile() != null) {
                        ssl.trustManager(config.caCertFile().toFile());
                    }
                    if (config.certFile() != null) {
                        ssl.keyManager(config.certFile().toFile(), config.keyFile().toFile());
                    }
                });
            } catch (SSLException | IllegalArgumentException e) {
                throw new IllegalArgumentException("ETCD_CA_CERT_FILE/ETCD_CERT_FILE/ETCD_KEY_FILE: cannot build TLS "
                        + "context (certificates must be PEM, the key PEM PKCS#8): " + e.getMessage(), e);
            }
        }
        return b;
    }

    public EtcdConfig config() {
        return config;
    }

    /** Calico's keys: {@code /calico/felix/v2/no-region/host/<node>/status} on a lease, {@code …/last_reported_status}. */
    @Override
    public boolean reportFelixStatus(String node, calico.libcalico.datastore.FelixStatusReport report, Duration ttl) {
        String base = "/calico/felix/v2/no-region/host/" + node + "/";
        ByteSequence value = ByteSequence.from(report.toJson(), StandardCharsets.UTF_8);
        long lease = await("grant the status report's lease",
                client.getLeaseClient().grant(Math.max(1, ttl.toSeconds()))).getID();
        await("write felix's status", kv.put(ByteSequence.from(base + "status", StandardCharsets.UTF_8), value,
                PutOption.builder().withLeaseId(lease).build()));
        await("write felix's last status", kv.put(ByteSequence.from(base + "last_reported_status",
                StandardCharsets.UTF_8), value));
        return true;
    }

    // ---------------------------------------------------------------- reads

    @Override
    public Optional<Resource> get(ResourceKey key) {
        Admission.checkKey(key);
        Optional<ByteSequence> k = keyOf(key);
        if (k.isEmpty()) {
            return Optional.empty();
        }
        GetResponse r = await("get " + key, kv.get(k.get()));
        return r.getKvs().isEmpty() ? Optional.empty() : Optional.of(decode(key.kind(), r.getKvs().get(0)));
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        Selector selector = labelSelector == null ? null : Admission.labelSelector(kind, labelSelector);
        for (int attempt = 1; ; attempt++) {
            try {
                return listOnce(kind, namespace, selector, 0);
            } catch (DatastoreException.Compacted e) {
                // A compaction between two pages removed the snapshot we were reading: start over.
                if (attempt == 3) {
                    throw new DatastoreException.Unavailable("list " + kind.plural()
                            + ": compacted away three times while paging", e);
                }
            }
        }
    }

    /** Every page of the range read at one etcd revision: etcd keeps it until compaction. */
    @Override
    public ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        if (revision <= 0) {
            throw new IllegalArgumentException("revision: must be positive, got " + revision);
        }
        Selector selector = labelSelector == null ? null : Admission.labelSelector(kind, labelSelector);
        return listOnce(kind, namespace, selector, revision);
    }

    /** One paged range read; {@code atRevision} 0 reads the current revision (fixed by the first page). */
    private ListResult listOnce(ResourceKind kind, String namespace, Selector selector, long atRevision) {
        ByteSequence prefix = EtcdKeys.prefix(kind, namespace);
        ByteSequence end = OptionsUtil.prefixEndOf(prefix);
        List<Resource> items = new ArrayList<>();
        long revision = atRevision;
        ByteSequence from = prefix;
        while (true) {
            GetOption.Builder opt = GetOption.builder().withRange(end).withLimit(LIST_PAGE_SIZE);
            if (revision != 0) {
                opt.withRevision(revision); // later pages read the first page's snapshot
            }
            GetResponse page;
            try {
                page = await("list " + kind.plural(), kv.get(from, opt.build()));
            } catch (DatastoreException.Compacted e) {
                throw new DatastoreException.Compacted(revision, e.compactRevision());
            }
            if (revision == 0) {
                revision = page.getHeader().getRevision();
            }
            for (KeyValue e : page.getKvs()) {
                if (EtcdKeys.parse(e.getKey()).isEmpty()) {
                    continue; // not a resource key (e.g. a deeper path written by another tool)
                }
                Resource r;
                try {
                    r = decode(kind, e);
                } catch (DatastoreException.Invalid bad) {
                    // One corrupt value must not hide every other resource of the kind.
                    LOG.warn("skipping undecodable value at {}: {}", e.getKey(), bad.getMessage());
                    continue;
                }
                if (selector == null || selector.matches(r.metadata().labels())) {
                    items.add(r);
                }
            }
            if (!page.isMore() || page.getKvs().isEmpty()) {
                break;
            }
            ByteSequence last = page.getKvs().get(page.getKvs().size() - 1).getKey();
            from = last.concat(ByteSequence.from(new byte[] {0}));
        }
        items.sort(BY_NAMESPACE_THEN_NAME);
        return new ListResult(items, revision);
    }

    @Override
    public long currentRevision() {
        return await("read revision",
                kv.get(EtcdKeys.bytes(EtcdKeys.ROOT), GetOption.builder().withCountOnly(true).build()))
                .getHeader().getRevision();
    }

    // ---------------------------------------------------------------- writes

    @Override
    public Resource create(Resource resource) {
        Resource r = admission.forCreate(resource, kind -> list(kind).items());
        ResourceKey key = r.key();
        Resource stored = r.withMetadata(r.metadata().withResourceVersion(null)
                .withCreation(UUID.randomUUID().toString(), now()));
        ByteSequence k = writeKey(stored);
        byte[] value = encode(stored);
        TxnResponse t = await("create " + key, kv.txn()
                .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                .Then(Op.put(k, ByteSequence.from(value), PutOption.DEFAULT))
                .commit());
        if (!t.isSucceeded()) {
            throw new DatastoreException.AlreadyExists(key);
        }
        long rev = t.getHeader().getRevision();
        return IpamEtcdLayout.covers(key.kind()) ? decode(key.kind(), k, value, rev, rev) : withRevision(stored, rev);
    }

    @Override
    public Resource update(Resource resource) {
        Resource r = admission.forUpdate(resource);
        ResourceKey key = r.key();
        Long expected = Admission.revisionOf(key, r.metadata().resourceVersion());
        ByteSequence k = writeKey(r);
        long giveUpAt = System.nanoTime() + config.requestTimeout().toNanos();
        for (int attempt = 1; ; attempt++) {
            GetResponse cur = await("update " + key, kv.get(k));
            if (cur.getKvs().isEmpty()) {
                throw new DatastoreException.NotFound(key);
            }
            KeyValue current = cur.getKvs().get(0);
            if (expected != null && current.getModRevision() != expected) {
                throw new DatastoreException.Conflict(key, r.metadata().resourceVersion(),
                        Long.toString(current.getModRevision()));
            }
            if (r.resourceKind() == ResourceKind.IP_POOL) {
                admission.checkImmutable(decode(key.kind(), current), r);
            }
            // uid and creationTimestamp belong to the stored object, not to the caller's copy.
            JsonNode meta = storedMetadata(current);
            Resource stored = r.withMetadata(r.metadata().withResourceVersion(null).withCreation(
                    text(meta, "uid", UUID.randomUUID().toString()), text(meta, "creationTimestamp", now())));
            byte[] value = encode(stored);
            TxnResponse t = await("update " + key, kv.txn()
                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(current.getModRevision())))
                    .Then(Op.put(k, ByteSequence.from(value), PutOption.DEFAULT))
                    .Else(Op.get(k, GetOption.DEFAULT))
                    .commit());
            if (t.isSucceeded()) {
                long rev = t.getHeader().getRevision();
                return IpamEtcdLayout.covers(key.kind())
                        ? decode(key.kind(), k, value, rev, current.getCreateRevision()) : withRevision(stored, rev);
            }
            List<KeyValue> now = t.getGetResponses().get(0).getKvs();
            if (now.isEmpty()) {
                throw new DatastoreException.NotFound(key);
            }
            if (expected != null) {
                throw new DatastoreException.Conflict(key, r.metadata().resourceVersion(),
                        Long.toString(now.get(0).getModRevision()));
            }
            // Unconditional update lost a race between our read and our write: read again.
            if (System.nanoTime() > giveUpAt) {
                throw new DatastoreException.Unavailable("update " + key + ": gave up after " + attempt
                        + " attempts; the resource changes faster than it can be read and written", null);
            }
        }
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        Admission.checkKey(key);
        Long expected = Admission.revisionOf(key, resourceVersion);
        ByteSequence k = keyOf(key).orElseThrow(() -> new DatastoreException.NotFound(key));
        DeleteOption withPrev = DeleteOption.builder().withPrevKV(true).build();
        List<KeyValue> previous;
        if (expected == null) {
            DeleteResponse d = await("delete " + key, kv.delete(k, withPrev));
            if (d.getDeleted() == 0) {
                throw new DatastoreException.NotFound(key);
            }
            previous = d.getPrevKvs();
        } else {
            TxnResponse t = await("delete " + key, kv.txn()
                    .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(expected)))
                    .Then(Op.delete(k, withPrev))
                    .Else(Op.get(k, GetOption.DEFAULT))
                    .commit());
            if (!t.isSucceeded()) {
                List<KeyValue> now = t.getGetResponses().get(0).getKvs();
                if (now.isEmpty()) {
                    throw new DatastoreException.NotFound(key);
                }
                throw new DatastoreException.Conflict(key, resourceVersion, Long.toString(now.get(0).getModRevision()));
            }
            previous = t.getDeleteResponses().get(0).getPrevKvs();
        }
        return decode(key.kind(), previous.get(0));
    }

    // ---------------------------------------------------------------- watch

    @Override
    public Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener) {
        if (closed.get()) {
            throw new IllegalStateException("datastore is closed");
        }
        if (fromRevision < 0) {
            throw new IllegalArgumentException("fromRevision: must be >= 0, got " + fromRevision);
        }
        String ns = kind.namespaced() && namespace != null && !namespace.isEmpty() ? namespace : null;
        EtcdWatch w = new EtcdWatch(watchIds.incrementAndGet(), kind, ns,
                fromRevision, listener, this::decode, watches::remove);
        watches.add(w);
        w.start(client.getWatchClient(), progressTimer, config.progressInterval());
        return w;
    }

    // ---------------------------------------------------------------- compaction

    /** The key kube-apiserver's compactors agree through; every compactor of one etcd uses the same. */
    static final String COMPACT_REV_KEY = "compact_rev_key";

    /**
     * What one compactor remembers between its steps.
     *
     * @param keyVersion the version of {@value #COMPACT_REV_KEY} it last saw
     * @param revision   the revision it saw then: compacted at its next step (0: nothing yet)
     */
    public record Compaction(long keyVersion, long revision) {
        /** A compactor's first step: it records a revision and compacts nothing. */
        public static Compaction first() {
            return new Compaction(0, 0);
        }
    }

    /**
     * One step of kube-apiserver's compactor, which Calico's kube-controllers run on etcd every
     * {@code etcdV3CompactionPeriod}: when {@value #COMPACT_REV_KEY} is still at the version this compactor
     * last saw, it takes the key (writing the current revision) and compacts at the revision it saw one step
     * ago, so at least one period of history stays; when another compactor moved the key, it only learns the
     * new version. Several compactors (replicas, kube-apiserver sharing the etcd) thus compact once per period.
     * {@return the state for the next step}
     */
    public Compaction compact(Compaction last) {
        ByteSequence key = ByteSequence.from(COMPACT_REV_KEY, StandardCharsets.UTF_8);
        TxnResponse t = await("compaction", kv.txn()
                .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.version(last.keyVersion())))
                .Then(Op.put(key, ByteSequence.from(Long.toString(last.revision()), StandardCharsets.UTF_8),
                        PutOption.DEFAULT))
                .Else(Op.get(key, GetOption.DEFAULT))
                .commit());
        long current = t.getHeader().getRevision();
        if (!t.isSucceeded()) {
            List<KeyValue> kvs = t.getGetResponses().isEmpty() ? List.of() : t.getGetResponses().get(0).getKvs();
            return new Compaction(kvs.isEmpty() ? 0 : kvs.get(0).getVersion(), current);
        }
        if (last.revision() > 0) {
            try {
                await("compact at " + last.revision(), kv.compact(last.revision()));
                LOG.info("etcd compacted at revision {}", last.revision());
            } catch (DatastoreException.Compacted e) {
                LOG.debug("etcd already compacted past revision {}", last.revision());
            }
        }
        return new Compaction(last.keyVersion() + 1, current);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            List.copyOf(watches).forEach(EtcdWatch::close);
            progressTimer.shutdownNow();
            client.close();
        }
    }

    // ---------------------------------------------------------------- helpers

    private Resource decode(ResourceKind kind, KeyValue e) {
        if (IpamEtcdLayout.covers(kind)) {
            return decode(kind, e.getKey(), e.getValue().getBytes(), e.getModRevision(), e.getCreateRevision());
        }
        try {
            return withRevision(codec.read(kind, e.getValue().getBytes()), e.getModRevision());
        } catch (ResourceParseException ex) {
            String where = e.getKey().toString();
            throw new DatastoreException.Invalid(new ValidationException(where,
                    List.of(new FieldError(ex.field(), "stored value does not decode: " + ex.reason()))));
        }
    }

    /** An IPAM kind's v1 value (Calico's layout) back to its resource. */
    private Resource decode(ResourceKind kind, ByteSequence key, byte[] value, long modRevision, long createRevision) {
        String where = key.toString(StandardCharsets.UTF_8);
        try {
            return withRevision(IpamEtcdLayout.decode(kind, where, value, createRevision, codec), modRevision);
        } catch (ResourceParseException ex) {
            throw new DatastoreException.Invalid(new ValidationException(where,
                    List.of(new FieldError(ex.field(), "stored value does not decode: " + ex.reason()))));
        }
    }

    private byte[] encode(Resource stored) {
        return IpamEtcdLayout.covers(stored.resourceKind()) ? IpamEtcdLayout.encode(stored, codec.jsonMapper())
                : codec.toJsonBytes(stored);
    }

    /** {@return where {@code r} is written} (an affinity's key comes from its spec). */
    private static ByteSequence writeKey(Resource r) {
        if (!IpamEtcdLayout.covers(r.resourceKind())) {
            return EtcdKeys.key(r.key());
        }
        try {
            return EtcdKeys.bytes(IpamEtcdLayout.path(r));
        } catch (IllegalArgumentException e) {
            throw new DatastoreException.Invalid(new ValidationException(r.key().toString(),
                    List.of(new FieldError("metadata.name", e.getMessage()))));
        }
    }

    /**
     * {@return the etcd key of {@code key}}, empty when there is none: an affinity whose name does
     * not give back its node and CIDR (IPv6, hashed) is looked up among the affinity keys.
     */
    private Optional<ByteSequence> keyOf(ResourceKey key) {
        if (!IpamEtcdLayout.covers(key.kind())) {
            return Optional.of(EtcdKeys.key(key));
        }
        Optional<String> direct;
        try {
            direct = IpamEtcdLayout.path(key);
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // e.g. a block name that is no CIDR: nothing can be stored under it
        }
        if (direct.isPresent()) {
            return direct.map(EtcdKeys::bytes);
        }
        ByteSequence prefix = EtcdKeys.bytes(IpamEtcdLayout.HOSTS);
        GetResponse all = await("find " + key, kv.get(prefix, GetOption.builder()
                .withRange(OptionsUtil.prefixEndOf(prefix)).withKeysOnly(true).build()));
        return all.getKvs().stream().map(KeyValue::getKey)
                .filter(k -> EtcdKeys.parse(k).filter(key::equals).isPresent()).findFirst();
    }

    private JsonNode storedMetadata(KeyValue e) {
        try {
            return codec.jsonMapper().readTree(e.getValue().getBytes()).path("metadata");
        } catch (IOException ex) {
            return codec.jsonMapper().createObjectNode(); // corrupt value: the update repairs it
        }
    }

    private static String text(JsonNode node, String field, String fallback) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() && !v.asText().isEmpty() ? v.asText() : fallback;
    }

    private static Resource withRevision(Resource r, long revision) {
        return r.withMetadata(r.metadata().withResourceVersion(Long.toString(revision)));
    }

    private String now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** Waits for a jetcd future within the request timeout and maps its failure to a {@link DatastoreException}. */
    private <T> T await(String what, CompletableFuture<T> f) {
        try {
            return f.get(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new DatastoreException.Unavailable(what + ": etcd did not answer within " + config.requestTimeout(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DatastoreException.Unavailable(what + ": interrupted", e);
        } catch (ExecutionException e) {
            throw translate(what, e.getCause());
        }
    }

    static DatastoreException translate(String what, Throwable t) {
        if (t instanceof CompactedException c) {
            return new DatastoreException.Compacted(0, c.getCompactedRevision());
        }
        if (t != null && String.valueOf(t.getMessage()).contains("required revision has been compacted")) {
            // A range read at a compacted revision fails with gRPC OUT_OF_RANGE, not jetcd's CompactedException
            // (that one is for watches); etcd does not say the compaction point there.
            return new DatastoreException.Compacted(0, 0);
        }
        // Everything else (refused, deadline, no leader, too large) is reported as retryable: a
        // datastore client cannot tell a transient etcd condition from a lasting one.
        return new DatastoreException.Unavailable(what + ": " + t.getMessage(), t);
    }

    /** {@return what every call to etcd passes through}: a deadline on unary calls, read-ahead on watches */
    static List<ClientInterceptor> interceptors(long timeoutMs) {
        return List.of(new UnaryDeadline(timeoutMs), new WatchPrefetch(WATCH_PREFETCH));
    }

    /** Puts a deadline on every unary etcd call; watch streams are long-lived and get none. */
    private record UnaryDeadline(long timeoutMs) implements ClientInterceptor {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
                options = options.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
            }
            return next.newCall(method, options);
        }
    }
}
