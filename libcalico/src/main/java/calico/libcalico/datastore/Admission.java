package calico.libcalico.datastore;

import calico.api.model.IPPool;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.selector.Selector;
import calico.api.selector.SelectorParseException;
import calico.api.validation.FieldError;
import calico.api.validation.IpPoolOverlap;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What every backend does to a resource before it writes it, so that all backends accept and
 * refuse exactly the same writes: defaulting and validation, key shape (a name, a namespace
 * exactly for namespaced kinds, no '/' in either), and the checks that need other resources
 * (IPPool CIDRs must not overlap; a pool's CIDR cannot change). Every refusal is a
 * {@link DatastoreException.Invalid} naming the field.
 */
public final class Admission {

    private final ResourceValidator validator;

    public Admission(ResourceValidator validator) {
        this.validator = Objects.requireNonNull(validator, "validator");
    }

    /**
     * {@return the defaulted resource to create}
     *
     * @param existing lists the stored resources of a kind, for the cross-resource checks
     */
    public Resource forCreate(Resource resource, Function<ResourceKind, List<Resource>> existing) {
        Resource r = defaulted(resource);
        if (r.metadata().resourceVersion() != null && !r.metadata().resourceVersion().isEmpty()) {
            throw invalid(r.key().toString(), List.of(
                    new FieldError("metadata.resourceVersion", "must not be set on create")));
        }
        if (r instanceof IPPool pool) {
            List<IPPool> pools = existing.apply(ResourceKind.IP_POOL).stream().map(IPPool.class::cast).toList();
            List<FieldError> overlaps = IpPoolOverlap.check(pool, pools);
            if (!overlaps.isEmpty()) {
                throw invalid(r.key().toString(), overlaps);
            }
        }
        return r;
    }

    /** {@return the defaulted resource to write over an existing one}. */
    public Resource forUpdate(Resource resource) {
        return defaulted(resource);
    }

    /** Refuses an update that changes what Calico treats as immutable; {@code current} is the stored value. */
    public void checkImmutable(Resource current, Resource candidate) {
        if (current instanceof IPPool before && candidate instanceof IPPool after
                && before.spec() != null && after.spec() != null
                && !Objects.equals(before.spec().cidr(), after.spec().cidr())) {
            throw invalid(candidate.key().toString(), List.of(new FieldError("spec.cidr",
                    "cannot be changed (was " + before.spec().cidr() + "); create a new pool and disable this one")));
        }
    }

    /** Refuses a key that cannot name exactly one stored resource. */
    public static void checkKey(ResourceKey key) {
        List<FieldError> errors = new ArrayList<>();
        checkName(key.name(), errors);
        checkNamespace(key.kind(), key.namespace(), errors);
        if (!errors.isEmpty()) {
            throw invalid(key.toString(), errors);
        }
    }

    /**
     * {@return the revision a resourceVersion names}, or {@code null} when none was given.
     * resourceVersions are the decimal revisions the datastore hands out.
     */
    public static Long revisionOf(ResourceKey key, String resourceVersion) {
        if (resourceVersion == null || resourceVersion.isEmpty()) {
            return null;
        }
        try {
            long v = Long.parseLong(resourceVersion);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw invalid(key.toString(), List.of(new FieldError("metadata.resourceVersion",
                "must be a positive decimal revision, got \"" + resourceVersion + "\"")));
    }

    /** {@return the parsed list filter}; null or blank means every resource. */
    public static Selector labelSelector(ResourceKind kind, String labelSelector) {
        try {
            return Selector.parse(labelSelector);
        } catch (SelectorParseException e) {
            throw invalid("list of " + kind.kind(), List.of(new FieldError("labelSelector", e.getMessage())));
        }
    }

    private Resource defaulted(Resource resource) {
        Objects.requireNonNull(resource, "resource");
        if (resource.resourceKind().kubernetesOnly()) {
            // Presented from Kubernetes' own objects by the kubernetes datastore; no backend stores it.
            throw invalid(resource.kind(), List.of(new FieldError("kind", resource.kind()
                    + " cannot be written: it is read from the Kubernetes API (kubernetes datastore only); "
                    + "change the Kubernetes object instead")));
        }
        Resource r;
        try {
            r = validator.defaultAndValidate(resource);
        } catch (ValidationException e) {
            throw new DatastoreException.Invalid(e);
        }
        ObjectMeta m = r.metadata();
        List<FieldError> errors = new ArrayList<>();
        if (m == null) {
            errors.add(new FieldError("metadata", "required"));
        } else {
            checkName(m.name(), errors);
            checkNamespace(r.resourceKind(), m.namespace(), errors);
        }
        if (!errors.isEmpty()) {
            throw invalid(r.kind() + "(" + (m == null ? "" : m.name()) + ")", errors);
        }
        return r;
    }

    private static void checkName(String name, List<FieldError> errors) {
        if (name == null || name.isEmpty()) {
            errors.add(new FieldError("metadata.name", "required"));
        } else if (name.contains("/")) {
            errors.add(new FieldError("metadata.name", "must not contain '/'"));
        }
    }

    private static void checkNamespace(ResourceKind kind, String namespace, List<FieldError> errors) {
        boolean has = namespace != null && !namespace.isEmpty();
        if (kind.namespaced() && !has) {
            errors.add(new FieldError("metadata.namespace", "required for the namespaced kind " + kind.kind()));
        } else if (kind.namespaced() && namespace.contains("/")) {
            errors.add(new FieldError("metadata.namespace", "must not contain '/'"));
        } else if (!kind.namespaced() && has) {
            errors.add(new FieldError("metadata.namespace", "must not be set for the cluster-scoped kind " + kind.kind()));
        }
    }

    private static DatastoreException.Invalid invalid(String what, List<FieldError> errors) {
        return new DatastoreException.Invalid(new ValidationException(what, errors));
    }
}
