package calico.api.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The closed string fields of {@link FelixConfigurationSpec}: each field's allowed values in
 * the {@code projectcalico.org/v3} spelling, and whether Calico's API compares them exactly or
 * ignoring case. The one table of them: the validator checks resources against it, and felix
 * reads its environment (where Calico's felix ignores case for every one) against it.
 */
public final class FelixConfigurationEnums {

    private FelixConfigurationEnums() {
    }

    /**
     * A field's allowed values.
     *
     * @param values  the v3 spellings, in Calico's order
     * @param anyCase the API accepts any case (Calico checks the others with a case-sensitive pattern)
     */
    public record Allowed(List<String> values, boolean anyCase) {
        public Allowed {
            values = List.copyOf(values);
        }

        /** {@return the v3 spelling of {@code raw}, matched ignoring case and surrounding blanks}, empty when none. */
        public Optional<String> canonical(String raw) {
            String t = raw == null ? "" : raw.strip();
            return values.stream().filter(v -> v.equalsIgnoreCase(t)).findFirst();
        }
    }

    /** Calico's log severities, as the {@code logSeverity*} fields take them. */
    public static final List<String> LOG_SEVERITIES = List.of("Trace", "Debug", "Info", "Warning", "Error", "Fatal");

    /** Every closed field by its JSON name. */
    public static final Map<String, Allowed> FIELDS = fields();

    /** {@return the allowed values of {@code field}}, empty when the field is not a closed one. */
    public static Optional<Allowed> of(String field) {
        return Optional.ofNullable(FIELDS.get(field));
    }

    private static Map<String, Allowed> fields() {
        Map<String, Allowed> m = new LinkedHashMap<>();
        exact(m, "logSeverityScreen", LOG_SEVERITIES);
        exact(m, "logSeverityFile", LOG_SEVERITIES);
        exact(m, "logSeveritySys", LOG_SEVERITIES);
        exact(m, "iptablesBackend", List.of("Auto", "NFT", "Legacy"));
        exact(m, "defaultEndpointToHostAction", List.of("Drop", "Accept", "Return"));
        exact(m, "iptablesFilterAllowAction", List.of("Accept", "Return"));
        exact(m, "iptablesMangleAllowAction", List.of("Accept", "Return"));
        exact(m, "iptablesFilterDenyAction", List.of("Drop", "Reject"));
        exact(m, "nftablesFilterAllowAction", List.of("Accept", "Return"));
        exact(m, "nftablesMangleAllowAction", List.of("Accept", "Return"));
        exact(m, "nftablesFilterDenyAction", List.of("Drop", "Reject"));
        exact(m, "bpfLogLevel", List.of("Off", "Info", "Debug"));
        exact(m, "bpfExternalServiceMode", List.of("Tunnel", "DSR"));
        exact(m, "bpfConnectTimeLoadBalancing", List.of("TCP", "Enabled", "Disabled"));
        exact(m, "bpfHostNetworkedNATWithoutCTLB", List.of("Enabled", "Disabled"));
        exact(m, "routeSource", List.of("WorkloadIPs", "CalicoIPAM"));
        anyCase(m, "chainInsertMode", List.of("Insert", "Append"));
        anyCase(m, "ipForwarding", List.of("Enabled", "Disabled"));
        anyCase(m, "nftablesMode", List.of("Enabled", "Disabled", "Auto"));
        anyCase(m, "bpfEnforceRPF", List.of("Disabled", "Strict", "Loose"));
        anyCase(m, "bpfConntrackLogLevel", List.of("Off", "Debug"));
        anyCase(m, "bpfConntrackMode", List.of("Auto", "Userspace", "BPFProgram"));
        anyCase(m, "bpfAttachType", List.of("TCX", "TC"));
        anyCase(m, "bpfProfiling", List.of("Disabled", "Enabled"));
        anyCase(m, "bpfRedirectToPeer", List.of("Disabled", "Enabled", "L2Only"));
        anyCase(m, "bpfMapSizeConntrackScaling", List.of("Disabled", "DoubleIfFull"));
        anyCase(m, "serviceLoopPrevention", List.of("Drop", "Reject", "Disabled"));
        anyCase(m, "workloadSourceSpoofing", List.of("Disabled", "Any"));
        anyCase(m, "floatingIPs", List.of("Enabled", "Disabled"));
        anyCase(m, "awsSrcDstCheck", List.of("DoNothing", "Enable", "Disable"));
        anyCase(m, "windowsManageFirewallRules", List.of("Enabled", "Disabled"));
        anyCase(m, "programClusterRoutes", List.of("Enabled", "Disabled"));
        anyCase(m, "natOutgoingExclusions", List.of("IPPoolsOnly", "IPPoolsAndHostIPs"));
        anyCase(m, "flowLogsLocalReporter", List.of("Enabled", "Disabled"));
        anyCase(m, "flowLogsPolicyEvaluationMode", List.of("None", "Continuous"));
        return java.util.Collections.unmodifiableMap(m);
    }

    private static void exact(Map<String, Allowed> m, String field, List<String> values) {
        m.put(field, new Allowed(values, false));
    }

    private static void anyCase(Map<String, Allowed> m, String field, List<String> values) {
        m.put(field, new Allowed(values, true));
    }
}
