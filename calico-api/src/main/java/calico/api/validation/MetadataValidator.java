package calico.api.validation;

import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Checks {@code metadata}: name present, namespace per the kind's scope, labels and annotations. */
final class MetadataValidator {

    /** Kubernetes' limit on the total size of a resource's annotations. */
    static final long ANNOTATIONS_MAX_BYTES = 256 * 1024;

    private static final FieldPath META = FieldPath.of("metadata");

    private MetadataValidator() {
    }

    /**
     * @param subdomainName whether the name must be a DNS-1123 subdomain (true for every kind
     *                      except those whose validator applies a stricter rule of its own)
     */
    static void validate(ObjectMeta meta, ResourceKind kind, boolean subdomainName, Errors errors) {
        if (meta == null) {
            errors.add(META, "is required");
            return;
        }
        if (meta.name() == null || meta.name().isEmpty()) {
            errors.add(META.field("name"), "is required");
        } else if (subdomainName) {
            String bad = Names.dnsSubdomain(meta.name());
            if (bad != null) {
                errors.add(META.field("name"), bad);
            }
        }
        String ns = meta.namespace();
        if (kind.namespaced()) {
            if (ns == null || ns.isEmpty()) {
                errors.add(META.field("namespace"), "is required: " + kind.kind() + " is namespaced");
            } else {
                String bad = Names.dnsLabel(ns);
                if (bad != null) {
                    errors.add(META.field("namespace"), bad);
                }
            }
        } else if (ns != null && !ns.isEmpty()) {
            errors.add(META.field("namespace"), "must not be set: " + kind.kind() + " is cluster-scoped");
        }
        labels(meta.labels(), META.field("labels"), errors);
        annotations(meta.annotations(), META.field("annotations"), errors);
    }

    /** Label keys and values, in key order so that error lists are stable. */
    static void labels(Map<String, String> labels, FieldPath path, Errors errors) {
        for (Map.Entry<String, String> e : new TreeMap<>(labels).entrySet()) {
            String badKey = Names.qualifiedName(e.getKey());
            if (badKey != null) {
                errors.add(path.key(e.getKey()), badKey);
            }
            String badValue = Names.labelValue(e.getValue());
            if (badValue != null) {
                errors.add(path.key(e.getKey()), badValue);
            }
        }
    }

    /** Annotation keys (checked lower-cased, as Kubernetes does) and their total size. */
    static void annotations(Map<String, String> annotations, FieldPath path, Errors errors) {
        long total = 0;
        for (Map.Entry<String, String> e : new TreeMap<>(annotations).entrySet()) {
            String bad = Names.qualifiedName(e.getKey().toLowerCase(Locale.ROOT));
            if (bad != null) {
                errors.add(path.key(e.getKey()), bad);
            }
            total += e.getKey().getBytes(StandardCharsets.UTF_8).length;
            total += e.getValue() == null ? 0 : e.getValue().getBytes(StandardCharsets.UTF_8).length;
        }
        if (total > ANNOTATIONS_MAX_BYTES) {
            errors.add(path, "total size " + total + " bytes exceeds the limit of " + ANNOTATIONS_MAX_BYTES);
        }
    }
}
