package calico.apiserver.rest;

import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.validation.FieldError;
import calico.api.validation.ResourceValidator;
import calico.apiserver.apply.ManagedFields;
import calico.apiserver.errors.ApiException;
import calico.apiserver.patch.Patches;
import calico.libcalico.datastore.Admission;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The REST verbs on one kind, over the libcalico {@link Datastore}: get, list (label and field
 * selectors, limit/continue), create, update, patch (four patch types), delete and
 * deletecollection, each with {@code dryRun=All}. Every write goes through the datastore's
 * validation (or, for a dry run, the same {@link Admission} step without the write).
 */
public final class ResourceHandler {

    private static final int PATCH_RETRIES = 5;

    private final Datastore datastore;
    private final ObjectCodec codec;
    private final Admission admission = new Admission(ResourceValidator.get());
    private final Clock clock;

    public ResourceHandler(Datastore datastore, ObjectCodec codec) {
        this(datastore, codec, Clock.systemUTC());
    }

    /** @param clock stamps {@code managedFields[].time} */
    public ResourceHandler(Datastore datastore, ObjectCodec codec, Clock clock) {
        this.datastore = datastore;
        this.codec = codec;
        this.clock = clock;
    }

    public Datastore datastore() {
        return datastore;
    }

    public ObjectCodec codec() {
        return codec;
    }

    // ---- reads ----

    public Reply get(ApiRequest req) {
        Resource r = call(req.kind(), req.name(), () -> datastore.get(key(req, req.name())))
                .orElseThrow(() -> ApiException.notFound(req.kind(), req.name()));
        return Reply.ok(codec.toTree(r));
    }

    /** The listed items (after selectors and paging) and the list's metadata. */
    public record Page(List<Resource> items, long revision, String continueToken, long remaining) {
    }

    public Page listPage(ApiRequest req) {
        String labels = LabelSelectors.toCalico(req.param("labelSelector"));
        FieldSelector fields = FieldSelector.parse(req.param("fieldSelector"), req.kind());
        String cont = req.param("continue");
        Continue c = cont == null || cont.isEmpty() ? null : Continue.decode(cont);
        String rv = req.param("resourceVersion");
        if (rv != null && !rv.isEmpty()) {
            if (c != null) {
                throw ApiException.badRequest("specifying resource version is not allowed when using continue");
            }
            ResourceVersion.parse(rv);
        }
        ListResult result = c == null || c.revision() <= 0
                ? call(req.kind(), null, () -> datastore.list(req.kind(), req.namespace(), labels))
                : listAt(req, labels, c);
        List<Resource> items = result.items().stream().filter(fields::matches).toList();
        long revision = result.revision();
        if (c != null) {
            items = items.stream().filter(r -> Continue.compare(r, c.namespace(), c.name()) > 0).toList();
        }
        long limit = parseLimit(req.param("limit"));
        String next = null;
        long remaining = 0;
        if (limit > 0 && items.size() > limit) {
            remaining = items.size() - limit;
            items = items.subList(0, (int) limit);
            Resource last = items.get(items.size() - 1);
            // A token continuing an inconsistent list (revision -1) stays inconsistent, as kube's does.
            long tokenRevision = c != null && c.revision() <= 0 ? -1 : revision;
            next = new Continue(tokenRevision, nz(last.metadata().namespace()), last.metadata().name()).encode();
        }
        return new Page(items, revision, next, remaining);
    }

    /**
     * The later pages of a paged list read the first page's revision, so writes between pages
     * do not show. Once that revision is compacted the answer is kube-apiserver's 410: its
     * message, and a token (revision -1) that continues from the same key at the current state.
     */
    private ListResult listAt(ApiRequest req, String labels, Continue c) {
        try {
            return call(req.kind(), null, () -> datastore.listAt(req.kind(), req.namespace(), labels, c.revision()));
        } catch (ApiException e) {
            if (e.code() == 410) {
                throw ApiException.continueExpired(new Continue(-1, c.namespace(), c.name()).encode());
            }
            throw e;
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("continue key is not valid: " + e.getMessage());
        }
    }

    public Reply list(ApiRequest req) {
        Page p = listPage(req);
        ObjectNode list = codec.json().createObjectNode();
        list.put("apiVersion", Resource.API_VERSION);
        list.put("kind", req.kind().listKind());
        ObjectNode meta = list.putObject("metadata");
        meta.put("resourceVersion", Long.toString(p.revision()));
        if (p.continueToken() != null) {
            meta.put("continue", p.continueToken());
            meta.put("remainingItemCount", p.remaining());
        }
        ArrayNode items = list.putArray("items");
        p.items().forEach(r -> items.add(codec.toTree(r)));
        return Reply.ok(list);
    }

    private static long parseLimit(String s) {
        if (s == null || s.isEmpty()) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(s));
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("limit: Invalid value: \"" + s + "\": must be an integer");
        }
    }

    // ---- writes ----

    public Reply create(ApiRequest req, ObjectNode body) {
        List<String> warnings = new ArrayList<>();
        FieldValidation fv = FieldValidation.parse(req.param("fieldValidation"));
        Resource r = codec.toResource(body, req.kind(), fv, warnings);
        r = withScope(req, r, true);
        String name = r.metadata().name();
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid(req.kind(), "", List.of(new ApiException.Cause("FieldValueRequired",
                    "Required value: name or generateName is required", "metadata.name")));
        }
        if (r.metadata().resourceVersion() != null && !r.metadata().resourceVersion().isEmpty()) {
            throw ApiException.badRequest("resourceVersion should not be set on objects to be created");
        }
        if (!ManagedFields.setByClient(body)) {
            r = owned(req, null, r);
        }
        Resource stored = create(req, r);
        return new Reply(201, codec.toTree(stored), warnings);
    }

    private Resource create(ApiRequest req, Resource r) {
        String name = r.metadata().name();
        if (req.dryRun()) {
            return call(req.kind(), name, () -> {
                if (datastore.get(r.key()).isPresent()) {
                    throw new DatastoreException.AlreadyExists(r.key());
                }
                Function<ResourceKind, List<Resource>> existing = k -> datastore.list(k).items();
                return admission.forCreate(r, existing);
            });
        }
        return call(req.kind(), name, () -> datastore.create(r));
    }

    public Reply update(ApiRequest req, ObjectNode body) {
        List<String> warnings = new ArrayList<>();
        Resource r = codec.toResource(body, req.kind(), FieldValidation.parse(req.param("fieldValidation")), warnings);
        r = withScope(req, r, false);
        Resource target = r;
        var current = call(req.kind(), req.name(), () -> datastore.get(target.key()));
        // As kube-apiserver: managedFields sent back as read mean "not mine to set"; changed ones are the client's.
        if (current.isPresent() && (!ManagedFields.setByClient(body)
                || current.get().metadata().managedFields().equals(r.metadata().managedFields()))) {
            r = owned(req, codec.toTree(current.get()), r);
        }
        return new Reply(200, codec.toTree(write(req, r)), warnings);
    }

    /** {@return r with managedFields recording an Update by the request's manager} (before: the stored tree, or null). */
    private Resource owned(ApiRequest req, ObjectNode before, Resource r) {
        ObjectNode after = codec.toTree(r);
        ManagedFields.update(before, after, req.fieldManager(), clock.instant());
        return withManaged(req, r, after);
    }

    private Resource withManaged(ApiRequest req, Resource r, ObjectNode tree) {
        Resource parsed = codec.toResource(tree, req.kind(), FieldValidation.IGNORE, new ArrayList<>());
        return r.withMetadata(r.metadata().withManagedFields(parsed.metadata().managedFields()));
    }

    private Resource write(ApiRequest req, Resource r) {
        String name = r.metadata().name();
        if (req.dryRun()) {
            return call(req.kind(), name, () -> {
                Resource current = datastore.get(r.key()).orElseThrow(() -> new DatastoreException.NotFound(r.key()));
                String rv = r.metadata().resourceVersion();
                if (rv != null && !rv.isEmpty() && !rv.equals(current.metadata().resourceVersion())) {
                    throw new DatastoreException.Conflict(r.key(), rv, current.metadata().resourceVersion());
                }
                Resource d = admission.forUpdate(r);
                admission.checkImmutable(current, d);
                return d.withMetadata(keepStored(d.metadata(), current.metadata()));
            });
        }
        return call(req.kind(), name, () -> datastore.update(r));
    }

    private static ObjectMeta keepStored(ObjectMeta m, ObjectMeta stored) {
        return m.withCreation(stored.uid(), stored.creationTimestamp()).withResourceVersion(stored.resourceVersion());
    }

    /** PATCH with any of the four patch types; apply creates what does not exist. */
    public Reply patch(ApiRequest req, byte[] body) {
        PatchType type = PatchType.of(req.contentType());
        FieldValidation fv = FieldValidation.parse(req.param("fieldValidation"));
        if (type == PatchType.APPLY) {
            String manager = req.param("fieldManager");
            if (manager == null || manager.isEmpty()) {
                throw ApiException.invalid(req.kind(), "", List.of(new ApiException.Cause("FieldValueRequired",
                        "Required value: is required for apply patch", "fieldManager")));
            }
        }
        JsonNode patch = type.parse(codec, body);
        boolean force = req.flag("force");
        if (force && type != PatchType.APPLY) {
            throw ApiException.badRequest("force: Invalid value: true: may not be specified for non-apply patch");
        }
        for (int attempt = 0; ; attempt++) {
            List<String> warnings = new ArrayList<>();
            var current = call(req.kind(), req.name(), () -> datastore.get(key(req, req.name())));
            if (current.isEmpty()) {
                if (type != PatchType.APPLY) {
                    throw ApiException.notFound(req.kind(), req.name());
                }
                ObjectNode applied = (ObjectNode) Patches.stripDirectives(patch.deepCopy());
                ObjectNode owned = ManagedFields.apply(null, applied, applied, req.param("fieldManager"), force,
                        clock.instant());
                Resource r = withScope(req, codec.toResource(owned, req.kind(), fv, warnings), true);
                return new Reply(201, codec.toTree(create(req, r)), warnings);
            }
            Resource cur = current.get();
            ObjectNode before = codec.toTree(cur);
            JsonNode after = type.apply(before.deepCopy(), patch);
            if (!(after instanceof ObjectNode patched)) {
                throw ApiException.badRequest("the patch did not produce an object");
            }
            ObjectNode afterObj;
            if (type == PatchType.APPLY) {
                afterObj = ManagedFields.apply(before, Patches.stripDirectives(patch.deepCopy()), patched,
                        req.param("fieldManager"), force, clock.instant());
            } else {
                afterObj = patched;
                if (!ManagedFields.setByClient(patch)) {
                    ManagedFields.update(before, afterObj, req.fieldManager(), clock.instant());
                }
            }
            String patchedRv = afterObj.path("metadata").path("resourceVersion").asText("");
            boolean pinned = !patchedRv.isEmpty() && !patchedRv.equals(cur.metadata().resourceVersion());
            if (type == PatchType.APPLY) {
                // Apply configurations carry no resourceVersion unless the user wants a precondition.
                pinned = patch.path("metadata").has("resourceVersion") && pinned;
            }
            if (!pinned && afterObj.get("metadata") instanceof ObjectNode m) {
                m.put("resourceVersion", cur.metadata().resourceVersion());
            }
            Resource r = withScope(req, codec.toResource(afterObj, req.kind(), fv, warnings), false);
            try {
                return new Reply(200, codec.toTree(write(req, r)), warnings);
            } catch (ApiException e) {
                if (e.code() != 409 || pinned || attempt >= PATCH_RETRIES) {
                    throw e;
                }
            }
        }
    }

    public Reply delete(ApiRequest req, ObjectNode options) {
        String rv = null;
        if (options != null) {
            JsonNode pre = options.path("preconditions");
            rv = pre.path("resourceVersion").isTextual() ? pre.path("resourceVersion").asText() : null;
            String uid = pre.path("uid").isTextual() ? pre.path("uid").asText() : null;
            if (uid != null) {
                Resource cur = call(req.kind(), req.name(), () -> datastore.get(key(req, req.name())))
                        .orElseThrow(() -> ApiException.notFound(req.kind(), req.name()));
                if (!uid.equals(cur.metadata().uid())) {
                    throw new ApiException(409, "Conflict", "Operation cannot be fulfilled on " + req.kind().plural()
                            + ".projectcalico.org \"" + req.name() + "\": Precondition failed: UID in precondition: "
                            + uid + ", UID in object meta: " + cur.metadata().uid(), req.name(), "projectcalico.org",
                            req.kind().plural(), null);
                }
            }
            if (options.path("dryRun").isArray()) {
                options.path("dryRun").forEach(d -> {
                    if (!d.asText().equals("All")) {
                        throw ApiException.badRequest("dryRun: Unsupported value: \"" + d.asText() + "\"");
                    }
                });
            }
        }
        boolean dry = req.dryRun() || (options != null && options.path("dryRun").size() > 0);
        return Reply.ok(codec.toTree(delete(req, key(req, req.name()), rv, dry)));
    }

    private Resource delete(ApiRequest req, ResourceKey key, String rv, boolean dryRun) {
        if (dryRun) {
            Resource cur = call(req.kind(), key.name(), () -> datastore.get(key))
                    .orElseThrow(() -> ApiException.notFound(req.kind(), key.name()));
            if (rv != null && !rv.equals(cur.metadata().resourceVersion())) {
                throw ApiException.conflict(req.kind(), key.name());
            }
            return cur;
        }
        return call(req.kind(), key.name(), () -> datastore.delete(key, rv));
    }

    public Reply deleteCollection(ApiRequest req) {
        Page p = listPage(req);
        ObjectNode list = codec.json().createObjectNode();
        list.put("apiVersion", Resource.API_VERSION);
        list.put("kind", req.kind().listKind());
        list.putObject("metadata");
        ArrayNode items = list.putArray("items");
        for (Resource r : p.items()) {
            try {
                items.add(codec.toTree(delete(req, r.key(), null, req.dryRun())));
            } catch (ApiException e) {
                if (e.code() != 404) {
                    throw e;
                }
            }
        }
        return Reply.ok(list);
    }

    // ---- helpers ----

    private ResourceKey key(ApiRequest req, String name) {
        return ResourceKey.of(req.kind(), req.namespace(), name);
    }

    /** Checks the body's name and namespace against the URL and fills in the URL's namespace. */
    private Resource withScope(ApiRequest req, Resource r, boolean creating) {
        ObjectMeta m = r.metadata();
        if (req.name() != null && !Objects.equals(req.name(), m.name())) {
            throw ApiException.badRequest("the name of the object (" + m.name()
                    + ") does not match the name on the URL (" + req.name() + ")");
        }
        if (req.kind().namespaced()) {
            if (m.namespace() != null && !m.namespace().isEmpty() && !m.namespace().equals(req.namespace())) {
                throw ApiException.badRequest("the namespace of the provided object does not match the namespace "
                        + "sent on the request");
            }
            if (req.namespace() == null) {
                throw ApiException.badRequest("the server could not find the requested resource");
            }
            m = m.withNamespace(req.namespace());
        } else if (m.namespace() != null && !m.namespace().isEmpty()) {
            m = m.withNamespace(null);
        }
        return r.withMetadata(m);
    }

    /** Runs a datastore call, turning its failures into kube-apiserver's answers. */
    public static <T> T call(ResourceKind kind, String name, Supplier<T> body) {
        try {
            return body.get();
        } catch (DatastoreException.NotFound e) {
            throw ApiException.notFound(kind, name);
        } catch (DatastoreException.AlreadyExists e) {
            throw ApiException.alreadyExists(kind, name);
        } catch (DatastoreException.Conflict e) {
            throw ApiException.conflict(kind, name);
        } catch (DatastoreException.Invalid e) {
            List<ApiException.Cause> causes = new ArrayList<>();
            for (FieldError fe : e.validation().errors()) {
                causes.add(new ApiException.Cause("FieldValueInvalid", "Invalid value: " + fe.reason(), fe.field()));
            }
            throw ApiException.invalid(kind, name == null ? "" : name, causes);
        } catch (DatastoreException.Unavailable e) {
            throw ApiException.unavailable("the datastore is unavailable: " + e.getMessage());
        } catch (DatastoreException.Compacted e) {
            throw ApiException.gone(e.getMessage());
        }
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    /**
     * The opaque {@code continue} token: the revision of the list's first page and the last key
     * returned; revision -1 continues at the current state (the token a 410 hands out).
     */
    record Continue(long revision, String namespace, String name) {
        String encode() {
            String raw = revision + "\n" + namespace + "\n" + name;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }

        static Continue decode(String token) {
            try {
                String[] p = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8).split("\n", -1);
                long revision = Long.parseLong(p[0]);
                if (revision < -1 || revision == 0) {
                    throw new IllegalArgumentException("revision " + revision);
                }
                return new Continue(revision, p[1], p[2]);
            } catch (RuntimeException e) {
                throw ApiException.badRequest("continue key is not valid: " + e.getMessage());
            }
        }

        static int compare(Resource r, String ns, String name) {
            int c = nz(r.metadata().namespace()).compareTo(ns);
            return c != 0 ? c : r.metadata().name().compareTo(name);
        }
    }
}
