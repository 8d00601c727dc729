package calico.api.validation;

import calico.api.model.FelixConfigurationEnums;
import calico.api.model.KubeControllersConfiguration;
import calico.api.model.KubeControllersConfigurationSpec;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Checks a KubeControllersConfiguration as Calico's client does: the only name is {@code default};
 * durations are Go durations, not negative; the log severity is one of Calico's; ports are ports;
 * host endpoint templates carry CIDRs and/or an interface pattern (a regular expression), a selector,
 * labels and a name part that is a resource name and unique among the templates. The status (written by the controllers) is checked like the spec.
 */
final class KubeControllersConfigurationValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");

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
        Set<String> names = new HashSet<>();
        for (int i = 0; i < templates.size(); i++) {
            KubeControllersConfigurationSpec.Template t = templates.get(i);
            FieldPath tp = at.index(i);
            String name = t.generateName() == null ? "" : t.generateName();
            if (!name.isEmpty()) {
                String bad = Names.dnsSubdomain(name);
                if (bad != null) {
                    errors.add(tp.field("generateName"), bad);
                }
            }
            if (!names.add(name)) {
                // Two templates with one generateName would write the same host endpoints and undo each other.
                errors.add(tp.field("generateName"), "\"" + name + "\" is used by an earlier template");
            }
            boolean noPattern = t.interfacePattern() == null || t.interfacePattern().isEmpty();
            if (t.interfaceCIDRs().isEmpty() && noPattern) {
                errors.add(tp, "at least one of interfaceCIDRs and interfacePattern must be set");
            }
            Cidrs.cidrsOrIps(t.interfaceCIDRs(), tp.field("interfaceCIDRs"), errors);
            if (!noPattern) {
                try {
                    Pattern.compile(t.interfacePattern());
                } catch (PatternSyntaxException e) {
                    errors.add(tp.field("interfacePattern"), "not a regular expression: " + e.getDescription());
                }
            }
            if (t.nodeSelector() != null && !t.nodeSelector().isEmpty()) {
                Selectors.check(t.nodeSelector(), tp.field("nodeSelector"), errors);
            }
            MetadataValidator.labels(t.labels(), tp.field("labels"), errors);
        }
    }

    private static void port(Integer port, FieldPath at, Errors errors) {
        if (port != null && (port < 0 || port > 65535)) {
            errors.add(at, port + " is not between 0 and 65535");
        }
    }
}
