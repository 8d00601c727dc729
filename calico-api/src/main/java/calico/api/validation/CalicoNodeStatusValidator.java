package calico.api.validation;

import calico.api.model.CalicoNodeStatus;
import calico.api.model.CalicoNodeStatusSpec;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks a CalicoNodeStatus as Calico's client does: {@code node} is required and a resource
 * name, {@code classes} required, each one of Calico's and none twice, {@code updatePeriodSeconds}
 * required and within 0..86400. The status is Calico's own report and is not checked (as Calico).
 */
final class CalicoNodeStatusValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");

    private CalicoNodeStatusValidator() {
    }

    static void validate(CalicoNodeStatus s, Errors errors) {
        MetadataValidator.validate(s.metadata(), s.resourceKind(), true, errors);
        CalicoNodeStatusSpec spec = s.spec();
        if (spec == null) {
            errors.add(SPEC, "is required (node, classes and updatePeriodSeconds)");
            return;
        }
        if (spec.node() == null || spec.node().isEmpty()) {
            errors.add(SPEC.field("node"), "is required: the node whose status to report");
        } else {
            String bad = Names.dnsSubdomain(spec.node());
            if (bad != null) {
                errors.add(SPEC.field("node"), bad);
            }
        }
        classes(spec.classes(), errors);
        Integer period = spec.updatePeriodSeconds();
        if (period == null) {
            errors.add(SPEC.field("updatePeriodSeconds"), "is required (0 stops the updates)");
        } else if (period < 0 || period > CalicoNodeStatusSpec.MAX_UPDATE_PERIOD_SECONDS) {
            errors.add(SPEC.field("updatePeriodSeconds"), "must be between 0 and "
                    + CalicoNodeStatusSpec.MAX_UPDATE_PERIOD_SECONDS + " (one day), got " + period);
        }
    }

    private static void classes(List<String> classes, Errors errors) {
        FieldPath at = SPEC.field("classes");
        if (classes.isEmpty()) {
            errors.add(at, "is required: one or more of " + String.join(", ", CalicoNodeStatusSpec.CLASSES));
            return;
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < classes.size(); i++) {
            String c = classes.get(i);
            if (!CalicoNodeStatusSpec.CLASSES.contains(c)) {
                errors.add(at.index(i), "\"" + c + "\" is not one of " + String.join(", ", CalicoNodeStatusSpec.CLASSES));
            } else if (!seen.add(c)) {
                errors.add(at.index(i), "\"" + c + "\" is listed twice");
            }
        }
    }
}
