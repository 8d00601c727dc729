package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Spec of a {@link FelixConfiguration}: {@code default} for the cluster, {@code node.<name>}
 * per node. Every field is optional; an absent field means "Felix's default". Field names are
 * Calico's, exactly.
 *
 * <p>Value rules: durations are Go duration strings ({@code "90s"}, {@code "50ms"});
 * Calico's mode fields are strings here (several accept any case) and are checked by the
 * validator; port ranges ({@code natPortRange}, {@code bpfPSNATPorts},
 * {@code kubeNodePortRanges}) are {@link Port}s, a number or {@code "min:max"}. The older
 * integer fields {@code iptablesPostWriteCheckIntervalSecs}, {@code iptablesLockTimeoutSecs},
 * {@code iptablesLockProbeIntervalMillis}, {@code reportingIntervalSecs} and
 * {@code reportingTTLSecs} are accepted and kept as their own fields next to the duration
 * fields that replaced them; which one wins is the consumer's decision (see {@link
 * #effectiveReportingInterval()} for the rule we use).
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record FelixConfigurationSpec(
        // Dataplane driver and general
        @JsonProperty("useInternalDataplaneDriver") Boolean useInternalDataplaneDriver,
        @JsonProperty("dataplaneDriver") String dataplaneDriver,
        @JsonProperty("dataplaneWatchdogTimeout") String dataplaneWatchdogTimeout,
        @JsonProperty("ipv6Support") Boolean ipv6Support,
        @JsonProperty("ipForwarding") String ipForwarding,
        @JsonProperty("featureDetectOverride") String featureDetectOverride,
        @JsonProperty("featureGates") String featureGates,
        @JsonProperty("netlinkTimeout") String netlinkTimeout,
        @JsonProperty("routeRefreshInterval") String routeRefreshInterval,
        @JsonProperty("interfaceRefreshInterval") String interfaceRefreshInterval,
        @JsonProperty("interfacePrefix") String interfacePrefix,
        @JsonProperty("interfaceExclude") String interfaceExclude,
        @JsonProperty("chainInsertMode") String chainInsertMode,
        @JsonProperty("defaultEndpointToHostAction") String defaultEndpointToHostAction,
        @JsonProperty("failsafeInboundHostPorts") List<ProtoPort> failsafeInboundHostPorts,
        @JsonProperty("failsafeOutboundHostPorts") List<ProtoPort> failsafeOutboundHostPorts,
        @JsonProperty("kubeNodePortRanges") List<Port> kubeNodePortRanges,
        @JsonProperty("natPortRange") Port natPortRange,
        @JsonProperty("natOutgoingAddress") String natOutgoingAddress,
        @JsonProperty("natOutgoingExclusions") String natOutgoingExclusions,
        @JsonProperty("externalNodesList") List<String> externalNodesList,
        @JsonProperty("removeExternalRoutes") Boolean removeExternalRoutes,
        @JsonProperty("programClusterRoutes") String programClusterRoutes,
        @JsonProperty("routeSource") String routeSource,
        @JsonProperty("routeSyncDisabled") Boolean routeSyncDisabled,
        @JsonProperty("routeTableRange") RouteTableRange routeTableRange,
        @JsonProperty("routeTableRanges") List<RouteTableRange> routeTableRanges,
        @JsonProperty("deviceRouteSourceAddress") String deviceRouteSourceAddress,
        @JsonProperty("deviceRouteSourceAddressIPv6") String deviceRouteSourceAddressIPv6,
        @JsonProperty("deviceRouteProtocol") Integer deviceRouteProtocol,
        @JsonProperty("mtuIfacePattern") String mtuIfacePattern,
        @JsonProperty("requireMTUFile") Boolean requireMTUFile,
        @JsonProperty("serviceLoopPrevention") String serviceLoopPrevention,
        @JsonProperty("workloadSourceSpoofing") String workloadSourceSpoofing,
        @JsonProperty("floatingIPs") String floatingIPs,
        @JsonProperty("awsSrcDstCheck") String awsSrcDstCheck,
        @JsonProperty("disableConntrackInvalidCheck") Boolean disableConntrackInvalidCheck,
        @JsonProperty("cgroupV2Path") String cgroupV2Path,
        @JsonProperty("sidecarAccelerationEnabled") Boolean sidecarAccelerationEnabled,
        @JsonProperty("windowsManageFirewallRules") String windowsManageFirewallRules,
        @JsonProperty("metadataAddr") String metadataAddr,
        @JsonProperty("metadataPort") Integer metadataPort,
        @JsonProperty("openstackRegion") String openstackRegion,
        // Logging
        @JsonProperty("logSeverityScreen") String logSeverityScreen,
        @JsonProperty("logSeverityFile") String logSeverityFile,
        @JsonProperty("logSeveritySys") String logSeveritySys,
        @JsonProperty("logFilePath") String logFilePath,
        @JsonProperty("logPrefix") String logPrefix,
        @JsonProperty("logDebugFilenameRegex") String logDebugFilenameRegex,
        // iptables (durations as strings; the *Secs/*Millis integers are the older names, kept as their own fields)
        @JsonProperty("iptablesBackend") String iptablesBackend,
        @JsonProperty("iptablesRefreshInterval") String iptablesRefreshInterval,
        @JsonProperty("iptablesPostWriteCheckInterval") String iptablesPostWriteCheckInterval,
        @JsonProperty("iptablesPostWriteCheckIntervalSecs") Integer iptablesPostWriteCheckIntervalSecs,
        @JsonProperty("iptablesLockFilePath") String iptablesLockFilePath,
        @JsonProperty("iptablesLockTimeout") String iptablesLockTimeout,
        @JsonProperty("iptablesLockTimeoutSecs") Integer iptablesLockTimeoutSecs,
        @JsonProperty("iptablesLockProbeInterval") String iptablesLockProbeInterval,
        @JsonProperty("iptablesLockProbeIntervalMillis") Integer iptablesLockProbeIntervalMillis,
        @JsonProperty("iptablesMarkMask") Long iptablesMarkMask,
        @JsonProperty("iptablesFilterAllowAction") String iptablesFilterAllowAction,
        @JsonProperty("iptablesFilterDenyAction") String iptablesFilterDenyAction,
        @JsonProperty("iptablesMangleAllowAction") String iptablesMangleAllowAction,
        @JsonProperty("iptablesNATOutgoingInterfaceFilter") String iptablesNATOutgoingInterfaceFilter,
        @JsonProperty("ipsetsRefreshInterval") String ipsetsRefreshInterval,
        @JsonProperty("maxIpsetSize") Integer maxIpsetSize,
        // nftables
        @JsonProperty("nftablesMode") String nftablesMode,
        @JsonProperty("nftablesRefreshInterval") String nftablesRefreshInterval,
        @JsonProperty("nftablesMarkMask") Long nftablesMarkMask,
        @JsonProperty("nftablesFilterAllowAction") String nftablesFilterAllowAction,
        @JsonProperty("nftablesFilterDenyAction") String nftablesFilterDenyAction,
        @JsonProperty("nftablesMangleAllowAction") String nftablesMangleAllowAction,
        // XDP
        @JsonProperty("xdpEnabled") Boolean xdpEnabled,
        @JsonProperty("xdpRefreshInterval") String xdpRefreshInterval,
        @JsonProperty("genericXDPEnabled") Boolean genericXDPEnabled,
        // eBPF dataplane
        @JsonProperty("bpfEnabled") Boolean bpfEnabled,
        @JsonProperty("bpfDisableUnprivileged") Boolean bpfDisableUnprivileged,
        @JsonProperty("bpfLogLevel") String bpfLogLevel,
        @JsonProperty("bpfLogFilters") Map<String, String> bpfLogFilters,
        @JsonProperty("bpfCTLBLogFilter") String bpfCTLBLogFilter,
        @JsonProperty("bpfDataIfacePattern") String bpfDataIfacePattern,
        @JsonProperty("bpfL3IfacePattern") String bpfL3IfacePattern,
        @JsonProperty("bpfConnectTimeLoadBalancingEnabled") Boolean bpfConnectTimeLoadBalancingEnabled,
        @JsonProperty("bpfConnectTimeLoadBalancing") String bpfConnectTimeLoadBalancing,
        @JsonProperty("bpfHostNetworkedNATWithoutCTLB") String bpfHostNetworkedNATWithoutCTLB,
        @JsonProperty("bpfExternalServiceMode") String bpfExternalServiceMode,
        @JsonProperty("bpfDSROptoutCIDRs") List<String> bpfDSROptoutCIDRs,
        @JsonProperty("bpfKubeProxyIptablesCleanupEnabled") Boolean bpfKubeProxyIptablesCleanupEnabled,
        @JsonProperty("bpfKubeProxyMinSyncPeriod") String bpfKubeProxyMinSyncPeriod,
        @JsonProperty("bpfKubeProxyEndpointSlicesEnabled") Boolean bpfKubeProxyEndpointSlicesEnabled,
        @JsonProperty("bpfPSNATPorts") Port bpfPSNATPorts,
        @JsonProperty("bpfExcludeCIDRsFromNAT") List<String> bpfExcludeCIDRsFromNAT,
        @JsonProperty("bpfMapSizeNATFrontend") Integer bpfMapSizeNATFrontend,
        @JsonProperty("bpfMapSizeNATBackend") Integer bpfMapSizeNATBackend,
        @JsonProperty("bpfMapSizeNATAffinity") Integer bpfMapSizeNATAffinity,
        @JsonProperty("bpfMapSizeRoute") Integer bpfMapSizeRoute,
        @JsonProperty("bpfMapSizeConntrack") Integer bpfMapSizeConntrack,
        @JsonProperty("bpfMapSizeConntrackScaling") String bpfMapSizeConntrackScaling,
        @JsonProperty("bpfMapSizeConntrackCleanupQueue") Integer bpfMapSizeConntrackCleanupQueue,
        @JsonProperty("bpfMapSizePerCpuConntrack") Integer bpfMapSizePerCpuConntrack,
        @JsonProperty("bpfMapSizeIPSets") Integer bpfMapSizeIPSets,
        @JsonProperty("bpfMapSizeIfState") Integer bpfMapSizeIfState,
        @JsonProperty("bpfEnforceRPF") String bpfEnforceRPF,
        @JsonProperty("bpfPolicyDebugEnabled") Boolean bpfPolicyDebugEnabled,
        @JsonProperty("bpfForceTrackPacketsFromIfaces") List<String> bpfForceTrackPacketsFromIfaces,
        @JsonProperty("bpfDisableGROForIfaces") String bpfDisableGROForIfaces,
        @JsonProperty("bpfExtToServiceConnmark") Integer bpfExtToServiceConnmark,
        @JsonProperty("bpfHostConntrackBypass") Boolean bpfHostConntrackBypass,
        @JsonProperty("bpfConntrackLogLevel") String bpfConntrackLogLevel,
        @JsonProperty("bpfConntrackMode") String bpfConntrackMode,
        @JsonProperty("bpfConntrackTimeouts") BPFConntrackTimeouts bpfConntrackTimeouts,
        @JsonProperty("bpfAttachType") String bpfAttachType,
        @JsonProperty("bpfProfiling") String bpfProfiling,
        @JsonProperty("bpfRedirectToPeer") String bpfRedirectToPeer,
        @JsonProperty("bpfExportBufferSizeMB") Integer bpfExportBufferSizeMB,
        // Encapsulation and WireGuard
        @JsonProperty("ipipEnabled") Boolean ipipEnabled,
        @JsonProperty("ipipMTU") Integer ipipMTU,
        @JsonProperty("allowIPIPPacketsFromWorkloads") Boolean allowIPIPPacketsFromWorkloads,
        @JsonProperty("vxlanEnabled") Boolean vxlanEnabled,
        @JsonProperty("vxlanMTU") Integer vxlanMTU,
        @JsonProperty("vxlanMTUV6") Integer vxlanMTUV6,
        @JsonProperty("vxlanPort") Integer vxlanPort,
        @JsonProperty("vxlanVNI") Integer vxlanVNI,
        @JsonProperty("allowVXLANPacketsFromWorkloads") Boolean allowVXLANPacketsFromWorkloads,
        @JsonProperty("wireguardEnabled") Boolean wireguardEnabled,
        @JsonProperty("wireguardEnabledV6") Boolean wireguardEnabledV6,
        @JsonProperty("wireguardListeningPort") Integer wireguardListeningPort,
        @JsonProperty("wireguardListeningPortV6") Integer wireguardListeningPortV6,
        @JsonProperty("wireguardRoutingRulePriority") Integer wireguardRoutingRulePriority,
        @JsonProperty("wireguardInterfaceName") String wireguardInterfaceName,
        @JsonProperty("wireguardInterfaceNameV6") String wireguardInterfaceNameV6,
        @JsonProperty("wireguardMTU") Integer wireguardMTU,
        @JsonProperty("wireguardMTUV6") Integer wireguardMTUV6,
        @JsonProperty("wireguardHostEncryptionEnabled") Boolean wireguardHostEncryptionEnabled,
        @JsonProperty("wireguardKeepAlive") String wireguardKeepAlive,
        @JsonProperty("wireguardThreadingEnabled") Boolean wireguardThreadingEnabled,
        // Health, metrics and debugging
        @JsonProperty("healthEnabled") Boolean healthEnabled,
        @JsonProperty("healthHost") String healthHost,
        @JsonProperty("healthPort") Integer healthPort,
        @JsonProperty("healthTimeoutOverrides") List<HealthTimeoutOverride> healthTimeoutOverrides,
        @JsonProperty("prometheusMetricsEnabled") Boolean prometheusMetricsEnabled,
        @JsonProperty("prometheusMetricsHost") String prometheusMetricsHost,
        @JsonProperty("prometheusMetricsPort") Integer prometheusMetricsPort,
        @JsonProperty("prometheusGoMetricsEnabled") Boolean prometheusGoMetricsEnabled,
        @JsonProperty("prometheusProcessMetricsEnabled") Boolean prometheusProcessMetricsEnabled,
        @JsonProperty("prometheusWireGuardMetricsEnabled") Boolean prometheusWireGuardMetricsEnabled,
        @JsonProperty("debugMemoryProfilePath") String debugMemoryProfilePath,
        @JsonProperty("debugDisableLogDropping") Boolean debugDisableLogDropping,
        @JsonProperty("debugSimulateCalcGraphHangAfter") String debugSimulateCalcGraphHangAfter,
        @JsonProperty("debugSimulateDataplaneHangAfter") String debugSimulateDataplaneHangAfter,
        @JsonProperty("debugSimulateDataplaneApplyDelay") String debugSimulateDataplaneApplyDelay,
        @JsonProperty("debugHost") String debugHost,
        @JsonProperty("debugPort") Integer debugPort,
        @JsonProperty("goGCThreshold") Integer goGCThreshold,
        @JsonProperty("goMemoryLimitMB") Integer goMemoryLimitMB,
        @JsonProperty("goMaxProcs") Integer goMaxProcs,
        // Status reporting, usage reporting, policy sync and flow logs
        @JsonProperty("reportingInterval") String reportingInterval,
        @JsonProperty("reportingIntervalSecs") Integer reportingIntervalSecs,
        @JsonProperty("reportingTTL") String reportingTTL,
        @JsonProperty("reportingTTLSecs") Integer reportingTTLSecs,
        @JsonProperty("endpointReportingEnabled") Boolean endpointReportingEnabled,
        @JsonProperty("endpointReportingDelay") String endpointReportingDelay,
        @JsonProperty("endpointStatusPathPrefix") String endpointStatusPathPrefix,
        @JsonProperty("usageReportingEnabled") Boolean usageReportingEnabled,
        @JsonProperty("usageReportingInitialDelay") String usageReportingInitialDelay,
        @JsonProperty("usageReportingInterval") String usageReportingInterval,
        @JsonProperty("policySyncPathPrefix") String policySyncPathPrefix,
        @JsonProperty("flowLogsFlushInterval") String flowLogsFlushInterval,
        @JsonProperty("flowLogsGoldmaneServer") String flowLogsGoldmaneServer,
        @JsonProperty("flowLogsLocalReporter") String flowLogsLocalReporter,
        @JsonProperty("flowLogsPolicyEvaluationMode") String flowLogsPolicyEvaluationMode,
        @JsonProperty("flowLogsCollectorDebugTrace") Boolean flowLogsCollectorDebugTrace) {

    /** Number of components; used by tests to check that examples set every field. */
    static final int FIELD_COUNT = 171;

    /**
     * The string fields holding Go durations ({@code "90s"}, {@code "50ms"}), by JSON name, in
     * alphabetical order: the one list of them. The validator checks them (Go syntax, not negative);
     * felix parses them, from a resource or from its environment (where a bare number is seconds).
     */
    public static final SortedSet<String> DURATION_FIELDS = Collections.unmodifiableSortedSet(new TreeSet<>(List.of(
            "dataplaneWatchdogTimeout", "netlinkTimeout", "routeRefreshInterval", "interfaceRefreshInterval",
            "iptablesRefreshInterval", "iptablesPostWriteCheckInterval", "iptablesLockTimeout",
            "iptablesLockProbeInterval", "ipsetsRefreshInterval", "nftablesRefreshInterval", "xdpRefreshInterval",
            "bpfKubeProxyMinSyncPeriod", "wireguardKeepAlive", "debugSimulateCalcGraphHangAfter",
            "debugSimulateDataplaneHangAfter", "debugSimulateDataplaneApplyDelay", "reportingInterval",
            "reportingTTL", "endpointReportingDelay", "usageReportingInitialDelay", "usageReportingInterval",
            "flowLogsFlushInterval")));

    public FelixConfigurationSpec {
        failsafeInboundHostPorts = failsafeInboundHostPorts == null ? List.of() : List.copyOf(failsafeInboundHostPorts);
        failsafeOutboundHostPorts = failsafeOutboundHostPorts == null ? List.of() : List.copyOf(failsafeOutboundHostPorts);
        kubeNodePortRanges = kubeNodePortRanges == null ? List.of() : List.copyOf(kubeNodePortRanges);
        externalNodesList = externalNodesList == null ? List.of() : List.copyOf(externalNodesList);
        routeTableRanges = routeTableRanges == null ? List.of() : List.copyOf(routeTableRanges);
        bpfDSROptoutCIDRs = bpfDSROptoutCIDRs == null ? List.of() : List.copyOf(bpfDSROptoutCIDRs);
        bpfExcludeCIDRsFromNAT = bpfExcludeCIDRsFromNAT == null ? List.of() : List.copyOf(bpfExcludeCIDRsFromNAT);
        bpfForceTrackPacketsFromIfaces = bpfForceTrackPacketsFromIfaces == null ? List.of()
                : List.copyOf(bpfForceTrackPacketsFromIfaces);
        healthTimeoutOverrides = healthTimeoutOverrides == null ? List.of() : List.copyOf(healthTimeoutOverrides);
        bpfLogFilters = bpfLogFilters == null ? Map.of() : Map.copyOf(bpfLogFilters);
    }

    /** {@return a spec with every field unset}, i.e. all of Felix's defaults. */
    public static FelixConfigurationSpec empty() {
        return EMPTY;
    }

    private static final FelixConfigurationSpec EMPTY = allUnset();

    /** Calls the canonical constructor with every argument null (171 nulls are unreadable in source). */
    private static FelixConfigurationSpec allUnset() {
        Class<?>[] types = Arrays.stream(FelixConfigurationSpec.class.getRecordComponents())
                .map(RecordComponent::getType).toArray(Class<?>[]::new);
        try {
            return FelixConfigurationSpec.class.getDeclaredConstructor(types).newInstance(new Object[types.length]);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * {@return the status-reporting interval}: {@code reportingInterval} when set, else the
     * older {@code reportingIntervalSecs} as seconds, else {@code null} (Felix's default).
     */
    public String effectiveReportingInterval() {
        return reportingInterval != null ? reportingInterval
                : reportingIntervalSecs != null ? reportingIntervalSecs + "s" : null;
    }

    /** A failsafe port: always allowed to/from host endpoints, whatever the policy. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ProtoPort(String protocol, Integer port, String net) {
    }

    /** A range of routing table indices Felix may use. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record RouteTableRange(Integer min, Integer max) {
    }

    /** Overrides the timeout of one named health reporter. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record HealthTimeoutOverride(String name, String timeout) {
    }

    /** Conntrack timeouts of the eBPF dataplane, as durations. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record BPFConntrackTimeouts(
            @JsonProperty("creationGracePeriod") String creationGracePeriod,
            @JsonProperty("tcpSynSent") String tcpSynSent,
            @JsonProperty("tcpEstablished") String tcpEstablished,
            @JsonProperty("tcpFinsSeen") String tcpFinsSeen,
            @JsonProperty("tcpResetSeen") String tcpResetSeen,
            @JsonProperty("udpTimeout") String udpTimeout,
            @JsonProperty("genericTimeout") String genericTimeout,
            @JsonProperty("icmpTimeout") String icmpTimeout) {
    }
}
