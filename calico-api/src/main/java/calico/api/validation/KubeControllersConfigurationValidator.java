package calico.api.validation;

import calico.api.model.FelixConfigurationEnums;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import java.util.List;

/**
 * Checks a KubeControllersConfiguration as Calico's client does: the only name is {@code default};
 * durations are Go durations, not negative; the log severity is one of Calico's; ports are ports;
 * host endpoint templates carry CIDRs, a selector and a name prefix short enough for a resource
 * name. The status (written by the controllers) is checked like the spec.
 */
final class KubeControllersConfigurationValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");
    /** A template's generateName plus Calico's suffix must stay a valid resource name. */
    private static final int MAX_GENERATE_NAME = 253;

    private KubeControllersConfigurationValidator() {
    }

    static void validate(KubeControllersConfiguration k, Errors errors) {
        MetadataValidator.validate(k.metadata(), k.resourceKind(), true, errors);
        if (k.metadata() != null && k.metadata().name() != null && !k.metadata().name().equals("default")) {
            errors.add(FieldPath.of("metadata").field("name"),
                    "must be \"default\": there is one KubeControllersConfiguration per cluster");
        }
        spec(k.spec(), SPEC, errors);
        if (k.status() != null) {
            spec(k.status().runningConfig(), FieldPath.of("status").field("runningConfig"), errors);
        }
    }

    private static void spec(KubeControllersConfigurationSpec s, FieldPath at, Errors errors) {
        if (s == null) {
            return;
        }
        if (s.logSeverityScreen() != null && !FelixConfigurationEnums.LOG_SEVERITIES.contains(s.logSeverityScreen())) {
            errors.add(at.field("logSeverityScreen"), "\"" + s.logSeverityScreen() + "\" is not one of "
                    + String.join(", ", FelixConfigurationEnums.LOG_SEVERITIES));
        }
        Durations.checkNonNegative(s.etcdV3CompactionPeriod(), at.field("etcdV3CompactionPeriod"), errors);
        port(s.prometheusMetricsPort(), at.field("prometheusMetricsPort"), errors);
        port(s.debugProfilePort(), at.field("debugProfilePort"), errors);
        KubeControllersConfigurationSpec.Controllers c = s.controllers();
        if (c == null) {
            return;
        }
        FieldPath cp = at.field("controllers");
        if (c.node() != null) {
            FieldPath np = cp.field("node");
            Durations.checkNonNegative(c.node().reconcilerPeriod(), np.field("reconcilerPeriod"), errors);
            Durations.checkNonNegative(c.node().leakGracePeriod(), np.field("leakGracePeriod"), errors);
            if (c.node().hostEndpoint() != null) {
                templates(c.node().hostEndpoint().templates(), np.field("hostEndpoint").field("templates"), errors);
            }
        }
        reconciler(c.policy(), cp.field("policy"), errors);
        reconciler(c.workloadEndpoint(), cp.field("workloadEndpoint"), errors);
        reconciler(c.serviceAccount(), cp.field("serviceAccount"), errors);
        reconciler(c.namespace(), cp.field("namespace"), errors);
    }

    private static void reconciler(KubeControllersConfigurationSpec.Reconciler r, FieldPath at, Errors errors) {
        if (r != null) {
            Durations.checkNonNegative(r.reconcilerPeriod(), at.field("reconcilerPeriod"), errors);
        }
    }

    private static void templates(List<KubeControllersConfigurationSpec.Template> templates, FieldPath at,
                                  Errors errors) {
        for (int i = 0; i < templates.size(); i++) {
            KubeControllersConfigurationSpec.Template t = templates.get(i);
            FieldPath tp = at.index(i);
            if (t.generateName() != null && t.generateName().length() > MAX_GENERATE_NAME) {
                errors.add(tp.field("generateName"), "must be at most " + MAX_GENERATE_NAME + " characters");
            }
            Cidrs.cidrsOrIps(t.interfaceCIDRs(), tp.field("interfaceCIDRs"), errors);
            if (t.nodeSelector() != null && !t.nodeSelector().isEmpty()) {
                Selectors.check(t.nodeSelector(), tp.field("nodeSelector"), errors);
            }
            t.labels().forEach((key, value) -> {
                if (key.isEmpty()) {
                    errors.add(tp.field("labels"), "a label key must not be empty");
                }
            });
        }
    }

    private static void port(Integer port, FieldPath at, Errors errors) {
        if (port != null && (port < 0 || port > 65535)) {
            errors.add(at, port + " is not between 0 and 65535");
        }
    }
}
