package calico.api.validation;

import calico.api.model.ObjectMeta;
import java.util.List;

/** Checks (global) network sets: their nets and the label Calico reserves for namespaces. */
final class NetworkSetValidator {

    /** Calico sets this label itself when it maps namespaced resources; users may not. */
    static final String NAMESPACE_LABEL = "projectcalico.org/namespace";

    private NetworkSetValidator() {
    }

    static void validate(ObjectMeta meta, List<String> nets, Errors errors) {
        if (meta != null && meta.labels().containsKey(NAMESPACE_LABEL)) {
            errors.add(FieldPath.of("metadata").field("labels").key(NAMESPACE_LABEL),
                    "is reserved: Calico sets it from the namespace");
        }
        Cidrs.cidrsOrIps(nets, FieldPath.of("spec").field("nets"), errors);
    }
}
