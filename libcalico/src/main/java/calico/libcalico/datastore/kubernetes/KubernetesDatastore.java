package calico.libcalico.datastore.kubernetes;

import calico.api.codec.ResourceParseException;
import calico.api.k8s.KubernetesConversionException;
import calico.api.model.Node;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.WorkloadEndpoint;
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
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code kubernetes} datastore ("KDD"): Calico resources as Calico's custom resources
 * ({@code crd.projectcalico.org/v1}), and Pods, Namespaces, ServiceAccounts, NetworkPolicies
 * and Nodes presented read-only as the Calico resources Calico derives from them (see
 * {@link KindSources}). {@code resourceVersion} is the API server's, read as a number;
 * {@link #currentRevision()} is a list's. See {@code libcalico/design/kubernetes-datastore.md}.
 *
 * <p>Writes go through the same {@link Admission} as the other backends. Conditional writes
 * are the API server's own: a PUT carrying the resourceVersion and a DELETE with a
 * resourceVersion precondition, so a stale version is refused by the server, not by a
 * read-then-compare here.
 */
public final class KubernetesDatastore implements Datastore {

    private static final Logger LOG = LoggerFactory.getLogger(KubernetesDatastore.class);

    private static final Comparator<Resource> BY_NAMESPACE_THEN_NAME = Comparator
            .comparing((Resource r) -> r.metadata().namespace(),
                    Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(r -> r.metadata().name());

    private static final io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext NAMESPACES =
            new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder()
                    .withGroup("").withVersion("v1").withKind("Namespace").withPlural("namespaces")
                    .withNamespaced(false).build();

    private final KubernetesConfig config;
    private final KubernetesClient client;
    /** {@link #client} with the prompt watch resumes ({@link #promptResumes}); the same HTTP client, never closed itself. */
    private final KubernetesClient watchClient;
    private final boolean ownsClient;
    private final KindSources kinds = new KindSources();
    private final ResourceValidator validator;
    private final Admission admission;
    private final InvalidObjects invalidObjects = new InvalidObjects();
    private final Clock clock;
    private final ObjectMapper json = calico.api.codec.ResourceCodec.get().jsonMapper();
    // One daemon thread sends every watch's periodic bookmarks.
    private final ScheduledExecutorService bookmarkTimer;
    private final Set<KubernetesWatch> watches = ConcurrentHashMap.newKeySet();
    private final AtomicLong watchIds = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();

    public KubernetesDatastore(KubernetesConfig config) {
        this(config, new KubernetesClientBuilder().withConfig(config.client()).build(), true,
                ResourceValidator.get(), Clock.systemUTC());
    }

    /** Over a client the caller owns (and closes); for tests and for services that share one client. */
    public KubernetesDatastore(KubernetesConfig config, KubernetesClient client) {
        this(config, client, false, ResourceValidator.get(), Clock.systemUTC());
    }

    private KubernetesDatastore(KubernetesConfig config, KubernetesClient client, boolean ownsClient,
                                ResourceValidator validator, Clock clock) {
        this.config = config;
        this.client = client;
        this.watchClient = promptResumes(client, java.util.concurrent.ThreadLocalRandom.current().nextDouble(0.8, 1.2));
        this.ownsClient = ownsClient;
        this.validator = validator;
        this.admission = new Admission(validator);
        this.clock = clock;
        this.bookmarkTimer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "k8s-watch-bookmarks");
            t.setDaemon(true);
            return t;
        });
    }

    public KubernetesConfig config() {
        return config;
    }

    // ---------------------------------------------------------------- reads

    @Override
    public Optional<Resource> get(ResourceKey key) {
        Admission.checkKey(key);
        for (Source source : kinds.sources(key.kind())) {
            Optional<Source.ObjectRef> ref = source.locator().apply(key);
            if (ref.isEmpty()) {
                continue;
            }
            GenericKubernetesResource obj = call("get " + key, key, () -> resource(source, ref.get()).get());
            if (obj == null) {
                continue; // another source of the kind may present it
            }
            Optional<Resource> found = read(source, tree(obj)).present().stream()
                    .filter(r -> r.key().equals(key)).findFirst();
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        Selector selector = labelSelector == null ? null : Admission.labelSelector(kind, labelSelector);
        String ns = kind.namespaced() && namespace != null && !namespace.isEmpty() ? namespace : null;
        try {
            return listAll(kind, ns, selector, config.listPageSize(), Long.MAX_VALUE);
        } catch (ContinueExpired e) {
            // As client-go's pager: the snapshot the pages were read from was compacted meanwhile;
            // read the whole list again in one request (a new snapshot, no token to expire).
            LOG.info("list {}: {}; listing again without paging", kind.plural(), e.getMessage());
            return listAll(kind, ns, selector, 0, Long.MAX_VALUE);
        }
    }

    /**
     * Every source read at exactly {@code revision} ({@code resourceVersionMatch=Exact}): the API
     * server reads etcd's history, so a caller paging over this datastore (apiserver-service) sees
     * one snapshot however the cluster's revision moves on. Compacted once etcd compacted it.
     */
    @Override
    public ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        Selector selector = labelSelector == null ? null : Admission.labelSelector(kind, labelSelector);
        String ns = kind.namespaced() && namespace != null && !namespace.isEmpty() ? namespace : null;
        if (revision <= 0) {
            throw new IllegalArgumentException("revision: must be positive, got " + revision);
        }
        try {
            return listAll(kind, ns, selector, config.listPageSize(), revision);
        } catch (ContinueExpired | RevisionExpired e) {
            // etcd's message names no compaction revision: the one asked for is certainly gone.
            throw new DatastoreException.Compacted(revision, revision + 1);
        }
    }

    /**
     * Lists every source of {@code kind} in pages of {@code pageSize} (0: one request per source),
     * at exactly {@code at}, or at the latest revision when it is {@code Long.MAX_VALUE}.
     */
    private ListResult listAll(ResourceKind kind, String ns, Selector selector, int pageSize, long at) {
        List<Resource> items = new ArrayList<>();
        long revision = at;
        boolean exact = at != Long.MAX_VALUE;
        for (Source source : kinds.sources(kind)) {
            // Later sources are read at the first one's revision when the server can (one snapshot);
            // otherwise the smallest revision is the one a watch may resume every source from
            // without missing anything (it may then see a change twice).
            revision = Math.min(revision, listSource(kind, source, ns, revision, exact, pageSize, obj -> {
                for (Resource r : readReporting(kind, source, tree(obj), false).present()) {
                    if (selector == null || selector.matches(r.metadata().labels())) {
                        items.add(r);
                    }
                }
            }));
        }
        items.sort(BY_NAMESPACE_THEN_NAME);
        return new ListResult(items, revision);
    }

    /**
     * Reads one source page by page (client-go's pager: {@code limit}, then {@code continue} until the
     * server has no more; every page is read at the first page's revision), handing each object to
     * {@code each}. The first page is read at exactly {@code at} unless it is {@code Long.MAX_VALUE}
     * (the first source of a list), or when the server cannot (410: compacted) and {@code exact}
     * is false, at the latest revision.
     *
     * @return the revision the pages were read at
     * @throws ContinueExpired when that revision was compacted between two pages
     * @throws RevisionExpired when {@code exact} and {@code at} is compacted
     */
    private long listSource(ResourceKind kind, Source source, String ns, long at, boolean exact, int pageSize,
                            Consumer<GenericKubernetesResource> each) {
        String what = "list " + kind.plural();
        GenericKubernetesResourceList page;
        if (at == Long.MAX_VALUE) {
            page = call(what, null, () -> collection(source, ns).list(pageOptions(pageSize).build()));
        } else {
            try {
                page = raw(what, () -> collection(source, ns).list(pageOptions(pageSize)
                        .withResourceVersion(Long.toString(at)).withResourceVersionMatch("Exact").build()));
            } catch (KubernetesStatus s) {
                if (exact && s.code == HttpURLConnection.HTTP_GONE) {
                    throw new RevisionExpired();
                }
                if (exact) {
                    throw s.translate(what, null);
                }
                // 410: that revision is already compacted (or the server cannot list at it): read the latest.
                LOG.debug("list {} at revision {}: {}; listing the latest", source.describe(), at, s.getMessage());
                page = call(what, null, () -> collection(source, ns).list(pageOptions(pageSize).build()));
            }
        }
        long revision = revisionOf(page.getMetadata() == null ? null : page.getMetadata().getResourceVersion(),
                "list " + source.describe());
        while (true) {
            page.getItems().forEach(each);
            String next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
            if (next == null || next.isEmpty()) {
                return revision;
            }
            ListOptions options = pageOptions(pageSize).withContinue(next).build();
            try {
                page = raw(what, () -> collection(source, ns).list(options));
            } catch (KubernetesStatus s) {
                if (s.code == HttpURLConnection.HTTP_GONE) {
                    throw new ContinueExpired("the continue token of " + source.describe() + " at revision " + revision
                            + " expired (410: compacted)");
                }
                throw s.translate(what, null);
            }
        }
    }

    /** {@return every object of {@code source} at exactly {@code revision}}, empty once it is compacted */
    private Optional<List<GenericKubernetesResource>> listExactly(ResourceKind kind, Source source, String ns,
                                                                  long revision) {
        List<GenericKubernetesResource> out = new ArrayList<>();
        try {
            listSource(kind, source, ns, revision, true, config.listPageSize(), out::add);
            return Optional.of(out);
        } catch (ContinueExpired | RevisionExpired e) {
            return Optional.empty();
        }
    }

    private static ListOptionsBuilder pageOptions(int pageSize) {
        ListOptionsBuilder b = new ListOptionsBuilder();
        return pageSize > 0 ? b.withLimit((long) pageSize) : b;
    }

    /** A list's continue token expired (410) between two pages. */
    private static final class ContinueExpired extends RuntimeException {
        ContinueExpired(String message) {
            super(message, null, false, false);
        }
    }

    /** The revision {@link #listAt} asked for is compacted (410). */
    private static final class RevisionExpired extends RuntimeException {
        RevisionExpired() {
            super("revision compacted", null, false, false);
        }
    }

    /** Every kind, Kubernetes-only ones (Services) included. */
    @Override
    public boolean presents(ResourceKind kind) {
        return true;
    }

    @Override
    public long currentRevision() {
        // Any list answers with the API server's current resourceVersion; namespaces are cheap
        // and every Calico component may read them.
        GenericKubernetesResourceList l = call("read revision", null, () -> client.genericKubernetesResources(NAMESPACES)
                .list(new ListOptionsBuilder().withLimit(1L).build()));
        return revisionOf(l.getMetadata() == null ? null : l.getMetadata().getResourceVersion(), "read revision");
    }

    // ---------------------------------------------------------------- writes

    @Override
    public Resource create(Resource resource) {
        Resource r = admission.forCreate(resource, kind -> list(kind).items());
        ResourceKey key = r.key();
        refuseReadOnly(key, "create");
        if (key.kind() == ResourceKind.WORKLOAD_ENDPOINT) {
            return writeIntoObject("create", key, null, pod -> PodAnnotations.record(pod, (WorkloadEndpoint) r)).after();
        }
        Resource stamped = r.withMetadata(r.metadata().withResourceVersion(null)
                .withCreation(null, now()));
        ObjectNode cr = kinds.crds().toCustomResource(stamped, null);
        Source source = crdSource(key.kind());
        GenericKubernetesResource created;
        try {
            created = raw("create " + key, () -> collection(source, key.namespace()).resource(generic(cr)).create());
        } catch (KubernetesStatus s) {
            if (s.code == HttpURLConnection.HTTP_CONFLICT) {
                throw new DatastoreException.AlreadyExists(key);
            }
            throw s.translate("create " + key, key);
        }
        return decodeWritten(source, key, created);
    }

    @Override
    public Resource update(Resource resource) {
        return update(resource, false);
    }

    /**
     * Writes the status of a kind with a {@link ResourceKind#statusSubresource() status subresource}
     * through that subresource (the stored spec is kept); any other kind by a plain update.
     */
    @Override
    public Resource updateStatus(Resource resource) {
        return update(resource, resource.resourceKind().statusSubresource());
    }

    private Resource update(Resource resource, boolean statusOnly) {
        Resource r = admission.forUpdate(resource);
        ResourceKey key = r.key();
        refuseReadOnly(key, "update");
        String expected = r.metadata().resourceVersion();
        Admission.revisionOf(key, expected);
        if (key.kind() == ResourceKind.NODE) {
            // Not a custom resource: Calico's fields go into the Kubernetes Node's annotations.
            return writeIntoObject("update", key, expected, node -> kinds.nodes().merge((Node) r, node)).after();
        }
        if (key.kind() == ResourceKind.WORKLOAD_ENDPOINT) {
            return writeIntoObject("update", key, expected, pod -> PodAnnotations.record(pod, (WorkloadEndpoint) r)).after();
        }
        Source source = crdSource(key.kind());
        Source.ObjectRef ref = new Source.ObjectRef(key.namespace(), key.name());
        while (true) {
            GenericKubernetesResource current = call("update " + key, key, () -> resource(source, ref).get());
            if (current == null) {
                throw new DatastoreException.NotFound(key);
            }
            String currentVersion = current.getMetadata().getResourceVersion();
            if (expected != null && !expected.isEmpty() && !expected.equals(currentVersion)) {
                throw new DatastoreException.Conflict(key, expected, currentVersion);
            }
            JsonNode currentTree = tree(current);
            Resource stored = decode(source, key.kind(), currentTree);
            admission.checkImmutable(stored, r);
            // uid and creationTimestamp belong to the stored object, not to the caller's copy.
            Resource candidate = r.withMetadata(withStoredCreation(r.metadata(), stored.metadata())
                    .withResourceVersion(currentVersion));
            ObjectNode cr = kinds.crds().toCustomResource(candidate, current.getMetadata().getUid());
            try {
                GenericKubernetesResource updated = raw("update " + key, () -> statusOnly
                        ? collection(source, key.namespace()).resource(generic(cr)).subresource("status").update()
                        : collection(source, key.namespace()).resource(generic(cr)).update());
                return decodeWritten(source, key, updated);
            } catch (KubernetesStatus s) {
                if (s.code == HttpURLConnection.HTTP_NOT_FOUND) {
                    throw new DatastoreException.NotFound(key);
                }
                if (s.code != HttpURLConnection.HTTP_CONFLICT) {
                    throw s.translate("update " + key, key);
                }
                if (expected != null && !expected.isEmpty()) {
                    throw new DatastoreException.Conflict(key, expected, currentVersionOr(source, ref, "unknown"));
                }
                // An update without a resourceVersion lost a race between our read and our write: read again.
            }
        }
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        Admission.checkKey(key);
        Admission.revisionOf(key, resourceVersion);
        refuseReadOnly(key, "delete");
        if (key.kind() == ResourceKind.WORKLOAD_ENDPOINT) {
            return writeIntoObject("delete", key, resourceVersion, PodAnnotations::release).before();
        }
        Source source = crdSource(key.kind());
        Source.ObjectRef ref = new Source.ObjectRef(key.namespace(), key.name());
        GenericKubernetesResource current = call("delete " + key, key, () -> resource(source, ref).get());
        if (current == null) {
            throw new DatastoreException.NotFound(key);
        }
        String currentVersion = current.getMetadata().getResourceVersion();
        if (resourceVersion != null && !resourceVersion.equals(currentVersion)) {
            throw new DatastoreException.Conflict(key, resourceVersion, currentVersion);
        }
        Resource before = decode(source, key.kind(), tree(current));
        // Precondition on the version just read, so the value returned is exactly what was deleted.
        List<StatusDetails> deleted;
        try {
            deleted = raw("delete " + key, () -> resource(source, ref).lockResourceVersion(currentVersion).delete());
        } catch (KubernetesStatus s) {
            if (s.code == HttpURLConnection.HTTP_CONFLICT) {
                String now = currentVersionOr(source, ref, null);
                if (now == null) {
                    throw new DatastoreException.NotFound(key);
                }
                if (resourceVersion != null) {
                    throw new DatastoreException.Conflict(key, resourceVersion, now);
                }
                return delete(key, null); // changed between our read and our delete: read again
            }
            throw s.translate("delete " + key, key);
        }
        if (deleted.isEmpty()) {
            throw new DatastoreException.NotFound(key);
        }
        return before;
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
        // "From now" is the current revision: a Kubernetes watch without one would replay every
        // existing object as ADDED.
        long start = fromRevision == 0 ? currentRevision() : fromRevision;
        List<Source> sources = kinds.sources(kind);
        KubernetesWatch w = new KubernetesWatch(watchIds.incrementAndGet(), kind, ns, start, sources, listener,
                (source, obj, deleted) -> readReporting(kind, source, tree(obj), deleted), watches::remove);
        watches.add(w);
        w.start((source, options, watcher) -> collection(watchClient, source, ns).watch(options, watcher),
                (source, revision) -> listExactly(kind, source, ns, revision),
                bookmarkTimer, config.bookmarkInterval(), config.watchTimeout());
        return w;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            List.copyOf(watches).forEach(KubernetesWatch::close);
            bookmarkTimer.shutdownNow();
            if (ownsClient) {
                client.close();
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * {@return what a listed or watched object presents}. An invalid one presents nothing: it is
     * reported to {@link InvalidObjects} (logged once per version, counted) and its keys are
     * absent (a watch reports deleted what it presented before, as Calico's felix treats an
     * invalid value as missing), so one bad object never hides the others of its kind; a deleted
     * one is forgotten.
     */
    private Converted readReporting(ResourceKind kind, Source source, JsonNode tree, boolean deleted) {
        try {
            Converted c = read(source, tree);
            if (invalidObjects.any()) {
                invalidObjects.forget(source.describe(tree));
            }
            return c;
        } catch (DatastoreException.Invalid bad) {
            String object = source.describe(tree);
            if (deleted) {
                // Its invalid version presented nothing, so nothing was delivered for it since.
                invalidObjects.forget(object);
                return Converted.none();
            }
            invalidObjects.report(kind, object, tree.path("metadata").path("resourceVersion").asText(""), bad);
            return new Converted(List.of(), source.keys().apply(tree));
        }
    }

    /** {@return how many invalid object versions of {@code kind} lists and watches skipped} (each counted once). */
    public long invalidObjects(ResourceKind kind) {
        return invalidObjects.count(kind);
    }

    /**
     * Converts one object as reads present it: a Calico custom resource must also pass Calico's
     * validation (it may have been written around it, straight into the CRD). Writes read the
     * stored object with {@link #convert} alone, so that an invalid one can still be replaced or deleted.
     */
    private Converted read(Source source, JsonNode obj) {
        Converted c = convert(source, obj);
        if (source.customResource()) {
            for (Resource r : c.present()) {
                try {
                    validator.defaultAndValidate(r);
                } catch (ValidationException e) {
                    throw new DatastoreException.Invalid(new ValidationException(source.describe(obj), e.errors()));
                }
            }
        }
        return c;
    }

    /** Converts one Kubernetes object; anything that does not decode is {@code Invalid} naming the object. */
    private Converted convert(Source source, JsonNode obj) {
        String what = source.describe(obj);
        try {
            return source.converter().apply(obj);
        } catch (ResourceParseException e) {
            throw invalid(what, e.field(), "stored object does not decode: " + e.reason());
        } catch (KubernetesConversionException e) {
            throw new DatastoreException.Invalid(new ValidationException(what, e.errors()));
        } catch (IllegalArgumentException e) {
            throw invalid(what, "", e.getMessage());
        }
    }

    private Resource decode(Source source, ResourceKind kind, JsonNode obj) {
        return convert(source, obj).present().stream().filter(r -> r.resourceKind() == kind).findFirst()
                .orElseThrow(() -> invalid(source.describe(), "", "object presents no " + kind.kind()));
    }

    private Resource decodeWritten(Source source, ResourceKey key, GenericKubernetesResource written) {
        return decode(source, key.kind(), tree(written));
    }

    /** A write into a Kubernetes object: the Calico resource it presented before and after (either may be null). */
    private record Written(Resource before, Resource after) {
    }

    /**
     * Writes into the Kubernetes object that presents {@code key} (a Pod for an endpoint, a Node):
     * read it, check {@code expected} against its resourceVersion, change it with {@code change},
     * write it at the version read (a Node: PUT; a Pod: a merge patch of its annotations through
     * the status subresource, as Calico's CNI plugin writes them). A race with another writer is a {@code Conflict} when the
     * caller named a version, else read again.
     */
    private Written writeIntoObject(String operation, ResourceKey key, String expected,
                                    java.util.function.UnaryOperator<JsonNode> change) {
        Source source = crdSource(key.kind());
        Source.ObjectRef ref = source.locator().apply(key).orElseThrow(() -> invalid(key.toString(), "metadata.name",
                "does not name a " + source.context().getKind() + " (" + operation + " of a " + key.kind().kind()
                        + " writes into it)"));
        while (true) {
            GenericKubernetesResource current = call(operation + " " + key, key, () -> resource(source, ref).get());
            if (current == null) {
                throw new DatastoreException.NotFound(key);
            }
            String currentVersion = current.getMetadata().getResourceVersion();
            if (expected != null && !expected.isEmpty() && !expected.equals(currentVersion)) {
                throw new DatastoreException.Conflict(key, expected, currentVersion);
            }
            JsonNode before = tree(current);
            if (!operation.equals("create") && presented(source, key, before) == null) {
                throw new DatastoreException.NotFound(key);
            }
            JsonNode changed = change.apply(before);
            if (!operation.equals("delete") && presented(source, key, changed) == null) {
                // Checked before writing: a Pod scheduled elsewhere must not carry this node's IPs.
                throw invalid(key.toString(), "metadata.name", "the " + source.context().getKind() + " "
                        + ref.name() + " does not present " + key.name()
                        + " (is it scheduled to that node and networked by Calico?); nothing written");
            }
            try {
                GenericKubernetesResource updated = raw(operation + " " + key, () -> key.kind() == ResourceKind.WORKLOAD_ENDPOINT
                        // As Calico: a merge patch of the Pod's status subresource, which Calico's CNI
                        // role may patch (it may not update the Pod itself); the resourceVersion in
                        // the patch makes it conditional.
                        ? resource(source, ref).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                                annotationPatch(before, changed, currentVersion).toString())
                        : collection(source, ref.namespace()).resource(generic((ObjectNode) changed)).update());
                return new Written(presented(source, key, before), presented(source, key, tree(updated)));
            } catch (KubernetesStatus s) {
                if (s.code != HttpURLConnection.HTTP_CONFLICT) {
                    throw s.translate(operation + " " + key, key);
                }
                if (expected != null && !expected.isEmpty()) {
                    throw new DatastoreException.Conflict(key, expected, currentVersionOr(source, ref, "unknown"));
                }
                // changed between our read and our write: read again
            }
        }
    }

    /**
     * {@return a JSON merge patch that gives {@code before} the annotations of {@code after}} (changed
     * and new keys set, removed keys null), conditional on {@code version}.
     */
    static ObjectNode annotationPatch(JsonNode before, JsonNode after, String version) {
        ObjectNode patch = JsonNodeFactory.instance.objectNode();
        ObjectNode meta = patch.putObject("metadata");
        meta.put("resourceVersion", version);
        ObjectNode annotations = meta.putObject("annotations");
        JsonNode was = before.path("metadata").path("annotations");
        JsonNode now = after.path("metadata").path("annotations");
        now.fields().forEachRemaining(e -> {
            if (!e.getValue().equals(was.get(e.getKey()))) {
                annotations.set(e.getKey(), e.getValue());
            }
        });
        was.fieldNames().forEachRemaining(k -> {
            if (!now.has(k)) {
                annotations.putNull(k);
            }
        });
        return patch;
    }

    private Resource presented(Source source, ResourceKey key, JsonNode obj) {
        return convert(source, obj).present().stream().filter(x -> x.key().equals(key)).findFirst().orElse(null);
    }

    private static ObjectMeta withStoredCreation(ObjectMeta meta, ObjectMeta stored) {
        return meta.withCreation(stored.uid(), stored.creationTimestamp());
    }

    private String currentVersionOr(Source source, Source.ObjectRef ref, String fallback) {
        GenericKubernetesResource now = call("read", null, () -> resource(source, ref).get());
        return now == null ? fallback : now.getMetadata().getResourceVersion();
    }

    private void refuseReadOnly(ResourceKey key, String operation) {
        Optional<String> why = KindSources.readOnly(key, operation);
        if (why.isPresent()) {
            throw invalid(key.toString(), "kind", operation + " refused: " + why.get());
        }
    }

    private Source crdSource(ResourceKind kind) {
        // The custom resource comes first for every writable kind (for Node: the Kubernetes Node).
        return kinds.sources(kind).get(0);
    }

    private MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
            operation(Source source) {
        return operation(client, source);
    }

    private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
            operation(KubernetesClient c, Source source) {
        return c.genericKubernetesResources(source.context());
    }

    /**
     * fabric8's first resume of a broken watch stream comes after this, each further one after
     * twice the last, at most 32 times it (fabric8's fixed 5 doublings): 30 ms gives ≤ 0.96 s, so a
     * stream is back within about a second of the server being reachable, whatever the outage
     * (issue 29; fabric8's default, 1 s, grows to 32 s).
     */
    static final int WATCH_RESUME_INTERVAL_MS = 30;

    /**
     * {@return {@code c} for watches}: the same HTTP client and settings, except that a broken stream is
     * resumed after {@link #WATCH_RESUME_INTERVAL_MS} × {@code spread} doubling to 32 times that, and a
     * failed attempt is not retried inside the HTTP client (its own schedule, 100 ms doubling to
     * 3.2 s, ten times, would add up to ~19 s before the watch's schedule even ran): one schedule.
     * {@code spread} (0.8–1.2, drawn per datastore) keeps nodes from retrying in step, as fabric8's
     * schedule has no jitter of its own.
     */
    static KubernetesClient promptResumes(KubernetesClient c, double spread) {
        io.fabric8.kubernetes.client.RequestConfig rc = new io.fabric8.kubernetes.client.RequestConfigBuilder(
                c.getConfiguration().getRequestConfig())
                .withWatchReconnectInterval((int) Math.round(WATCH_RESUME_INTERVAL_MS * spread))
                .withRequestRetryBackoffLimit(0)
                .build();
        return c.newClient(rc).adapt(KubernetesClient.class);
    }

    /** The collection to list: one namespace, every namespace, or the cluster-scoped kind. */
    private NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
            collection(Source source, String namespace) {
        return collection(client, source, namespace);
    }

    /** The collection to list or watch through {@code c}. */
    private static NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList, io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
            collection(KubernetesClient c, Source source, String namespace) {
        var op = operation(c, source);
        if (!Boolean.TRUE.equals(source.context().isNamespaceScoped())) {
            return op;
        }
        if (namespace == null) {
            @SuppressWarnings("unchecked")
            var any = (NonNamespaceOperation<GenericKubernetesResource, GenericKubernetesResourceList,
                    io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>) (Object) op.inAnyNamespace();
            return any;
        }
        return op.inNamespace(namespace);
    }

    private io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource> resource(Source source, Source.ObjectRef ref) {
        var op = operation(source);
        return Boolean.TRUE.equals(source.context().isNamespaceScoped())
                ? op.inNamespace(ref.namespace()).withName(ref.name())
                : op.withName(ref.name());
    }

    private JsonNode tree(GenericKubernetesResource obj) {
        try {
            return json.readTree(client.getKubernetesSerialization().asJson(obj));
        } catch (IOException e) {
            throw invalid("Kubernetes object", "", "does not decode: " + e.getMessage());
        }
    }

    private GenericKubernetesResource generic(ObjectNode cr) {
        return client.getKubernetesSerialization().unmarshal(cr.toString(), GenericKubernetesResource.class);
    }

    private String now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    static long revisionOf(String resourceVersion, String what) {
        try {
            return Long.parseLong(resourceVersion);
        } catch (NumberFormatException | NullPointerException e) {
            throw new DatastoreException.Unavailable(what + ": the API server's resourceVersion \"" + resourceVersion
                    + "\" is not a number; this datastore needs an etcd-backed API server", e);
        }
    }

    private static DatastoreException.Invalid invalid(String what, String field, String reason) {
        return new DatastoreException.Invalid(new ValidationException(what, List.of(new FieldError(field, reason))));
    }

    /** A Kubernetes API call whose failures become {@link DatastoreException}s; {@code key} may be null. */
    private <T> T call(String what, ResourceKey key, java.util.function.Supplier<T> body) {
        try {
            return raw(what, body);
        } catch (KubernetesStatus s) {
            throw s.translate(what, key);
        }
    }

    /** A Kubernetes API call; an HTTP status is a {@link KubernetesStatus} for the caller, anything else {@code Unavailable}. */
    private <T> T raw(String what, java.util.function.Supplier<T> body) {
        try {
            return body.get();
        } catch (KubernetesClientException e) {
            if (e.getCode() > 0) {
                throw new KubernetesStatus(e);
            }
            throw new DatastoreException.Unavailable(what + ": Kubernetes API server unreachable: " + e.getMessage(), e);
        }
    }

    /** An HTTP status from the API server, classified by the caller, or by {@link #translate} when it does not care. */
    static final class KubernetesStatus extends RuntimeException {
        final int code;

        KubernetesStatus(KubernetesClientException cause) {
            super(cause.getMessage(), cause);
            this.code = cause.getCode();
        }

        DatastoreException translate(String what, ResourceKey key) {
            return switch (code) {
                case HttpURLConnection.HTTP_NOT_FOUND -> key != null ? new DatastoreException.NotFound(key)
                        : new DatastoreException.Unavailable(what + ": the API server does not serve it (are Calico's "
                                + "CustomResourceDefinitions installed?): " + getMessage(), this);
                case HttpURLConnection.HTTP_CONFLICT -> key != null ? new DatastoreException.Conflict(key, "?", "?")
                        : new DatastoreException.Unavailable(what + ": conflict: " + getMessage(), this);
                case HttpURLConnection.HTTP_BAD_REQUEST, 422 -> invalid(key == null ? what : key.toString(), "",
                        "refused by the Kubernetes API server: " + getMessage());
                case HttpURLConnection.HTTP_UNAUTHORIZED, HttpURLConnection.HTTP_FORBIDDEN ->
                        new DatastoreException.Unavailable(what + ": not permitted (check the service account's RBAC "
                                + "for " + (key == null ? "the resource" : key.kind().plural()) + "): " + getMessage(), this);
                default -> new DatastoreException.Unavailable(what + ": Kubernetes API server answered " + code + ": "
                        + getMessage(), this);
            };
        }
    }
}
