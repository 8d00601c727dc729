package calico.felix.calc;

import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Which FelixConfiguration fields this felix acts on, so that a field set away from its default is never
 * accepted silently: every field of the spec is {@link State#HONOURED} (from the resource and from its
 * {@code FELIX_*} variable), {@link State#ENVIRONMENT} (read from the variable only, at start-up: listeners and
 * ports) or {@link State#NOT_SUPPORTED} (read, validated and shown in {@code /config}, but nothing acts on it).
 * felix warns about, counts and lists in its status the fields set to something it does not act on.
 * felix-service/design/felix-configuration-fields.md gives every field's state; a test keeps the two equal.
 */
public final class ConfigSupport {

    /** What felix does with a field. */
    public enum State {
        HONOURED, ENVIRONMENT, NOT_SUPPORTED
    }

    /** Fields a consumer reads from {@link FelixSettings} (directly or through one of its derived views). */
    private static final Set<String> HONOURED = Set.of(
            "interfacePrefix", "ipv6Support", "ipForwarding", "chainInsertMode", "defaultEndpointToHostAction",
            "failsafeInboundHostPorts", "failsafeOutboundHostPorts", "natPortRange", "natOutgoingExclusions",
            "routeRefreshInterval", "routeSource", "routeTableRange", "routeTableRanges", "mtuIfacePattern",
            "requireMTUFile", "floatingIPs", "logSeverityScreen", "healthTimeoutOverrides",
            "iptablesBackend", "iptablesRefreshInterval", "iptablesLockFilePath", "iptablesLockTimeout",
            "iptablesLockProbeInterval", "iptablesMarkMask", "iptablesFilterAllowAction", "iptablesFilterDenyAction",
            "nftablesMode", "nftablesFilterAllowAction", "nftablesFilterDenyAction", "bpfEnabled",
            "bpfMapSizeConntrack", "bpfConntrackTimeouts",
            "ipipEnabled", "ipipMTU", "vxlanEnabled", "vxlanMTU", "vxlanMTUV6", "vxlanPort", "vxlanVNI",
            "wireguardEnabled", "wireguardEnabledV6", "wireguardListeningPort", "wireguardListeningPortV6",
            "wireguardRoutingRulePriority", "wireguardInterfaceName", "wireguardInterfaceNameV6", "wireguardMTU",
            "wireguardMTUV6", "wireguardHostEncryptionEnabled", "wireguardKeepAlive",
            "flowLogsFlushInterval", "flowLogsGoldmaneServer", "flowLogsPolicyEvaluationMode", "externalNodesList", "workloadSourceSpoofing", "removeExternalRoutes", "endpointStatusPathPrefix",
            "prometheusMetricsEnabled", "interfaceExclude", "reportingInterval", "reportingTTL", "serviceLoopPrevention",
            "kubeNodePortRanges",
            // the integer forms Calico still accepts, folded into the duration fields above
            "iptablesLockTimeoutSecs", "iptablesLockProbeIntervalMillis", "reportingIntervalSecs", "reportingTTLSecs");

    /** Fields bound from their {@code FELIX_*} variable when felix starts (Spring properties), not from a resource. */
    private static final Set<String> ENVIRONMENT = Set.of("healthEnabled", "healthHost", "healthPort",
            "prometheusMetricsHost", "prometheusMetricsPort", "debugHost", "debugPort");

    private ConfigSupport() {
    }

    /** {@return what felix does with {@code field}}. */
    public static State state(String field) {
        return HONOURED.contains(field) ? State.HONOURED
                : ENVIRONMENT.contains(field) ? State.ENVIRONMENT : State.NOT_SUPPORTED;
    }

    /** {@return every spec field's state}, by field name. */
    public static SortedMap<String, State> all() {
        SortedMap<String, State> out = new TreeMap<>();
        ConfigFields.COMPONENTS.keySet().forEach(f -> out.put(f, state(f)));
        return out;
    }

    /** {@return Calico's default of {@code field}} as the resolved map prints it ("" when it has none). */
    static String defaultOf(String field) {
        return FelixDefaults.VALUES.getOrDefault(field, "");
    }

    /**
     * {@return the fields of {@code resolved} that are set away from their default but that felix does not act
     * on}, with their values; {@code fromResources} are the fields a FelixConfiguration sets, where a field
     * read from the environment only counts too.
     */
    static SortedMap<String, String> ignored(Map<String, String> resolved, Set<String> fromResources) {
        SortedMap<String, String> out = new TreeMap<>();
        resolved.forEach((field, value) -> {
            State s = state(field);
            boolean ignored = s == State.NOT_SUPPORTED || (s == State.ENVIRONMENT && fromResources.contains(field));
            if (ignored && !value.equals(defaultOf(field))) {
                out.put(field, value);
            }
        });
        return out;
    }
}
