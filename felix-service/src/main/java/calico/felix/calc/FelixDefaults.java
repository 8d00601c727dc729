package calico.felix.calc;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Felix's built-in defaults, by FelixConfiguration field name, in the printed form the
 * resolver emits. Source: the {@code config:"type;default"} tags of Calico's
 * {@code felix/config/config_params.go} (read Dec 2026), cross-checked with the
 * FelixConfiguration reference. A field absent here defaults to "" (unset): for most that is
 * Calico's own empty default; for {@code ipipEnabled}/{@code vxlanEnabled} it means "decided
 * by the IP pools", as in Calico where they are optional booleans.
 *
 * <p>Enumerations are printed in the {@code projectcalico.org/v3} spelling ({@code Info},
 * {@code Drop}, {@code Insert}) of calico-api's {@code FelixConfigurationEnums}, the one table
 * of them, not the upper-case form Felix uses internally.
 */
final class FelixDefaults {

    private FelixDefaults() {
    }

    /** The superseded integer fields and the duration field each one feeds, with its unit. */
    record Superseded(String newField, String unit) {
    }

    /** Older names kept by the v3 API; folded into the duration field when that one is unset. */
    static final Map<String, Superseded> SUPERSEDED = Map.of(
            "iptablesPostWriteCheckIntervalSecs", new Superseded("iptablesPostWriteCheckInterval", "s"),
            "iptablesLockTimeoutSecs", new Superseded("iptablesLockTimeout", "s"),
            "iptablesLockProbeIntervalMillis", new Superseded("iptablesLockProbeInterval", "ms"),
            "reportingIntervalSecs", new Superseded("reportingInterval", "s"),
            "reportingTTLSecs", new Superseded("reportingTTL", "s"));


    /** Calico's default for each field that has one (printed form). */
    static final Map<String, String> VALUES = buildValues();

    private static Map<String, String> buildValues() {
        Map<String, String> d = new LinkedHashMap<>();
        // Dataplane driver and general
        d.put("useInternalDataplaneDriver", "true");
        d.put("dataplaneDriver", "calico-iptables-plugin");
        d.put("dataplaneWatchdogTimeout", "90s");
        d.put("ipv6Support", "true");
        d.put("ipForwarding", "Enabled");
        d.put("netlinkTimeout", "10s");
        d.put("routeRefreshInterval", "90s");
        d.put("interfaceRefreshInterval", "90s");
        d.put("interfacePrefix", "cali");
        d.put("interfaceExclude", "kube-ipvs0");
        d.put("chainInsertMode", "Insert");
        d.put("defaultEndpointToHostAction", "Drop");
        d.put("failsafeInboundHostPorts", "tcp:22,udp:68,tcp:179,tcp:2379,tcp:2380,tcp:5473,tcp:6443,tcp:6666,tcp:6667");
        d.put("failsafeOutboundHostPorts", "udp:53,udp:67,tcp:179,tcp:2379,tcp:2380,tcp:5473,tcp:6443,tcp:6666,tcp:6667");
        d.put("kubeNodePortRanges", "30000:32767");
        d.put("natOutgoingExclusions", "IPPoolsOnly");
        d.put("removeExternalRoutes", "true");
        d.put("programClusterRoutes", "Disabled");
        d.put("routeSource", "CalicoIPAM");
        d.put("routeSyncDisabled", "false");
        d.put("deviceRouteProtocol", "3");
        d.put("mtuIfacePattern", "^((en|wl|ww|sl|ib)[Pcopsvx].*|(eth|wlan|wwan).*)");
        d.put("requireMTUFile", "false");
        d.put("serviceLoopPrevention", "Drop");
        d.put("workloadSourceSpoofing", "Disabled");
        d.put("floatingIPs", "Disabled");
        d.put("awsSrcDstCheck", "DoNothing");
        d.put("disableConntrackInvalidCheck", "false");
        d.put("sidecarAccelerationEnabled", "false");
        d.put("windowsManageFirewallRules", "Disabled");
        d.put("metadataAddr", "127.0.0.1");
        d.put("metadataPort", "8775");
        // Logging
        d.put("logSeverityScreen", "Info");
        d.put("logSeverityFile", "Info");
        d.put("logSeveritySys", "Info");
        d.put("logFilePath", "/var/log/calico/felix.log");
        d.put("logPrefix", "calico-packet");
        // iptables
        d.put("iptablesBackend", "Auto");
        d.put("iptablesRefreshInterval", "180s");
        d.put("iptablesPostWriteCheckInterval", "5s");
        d.put("iptablesLockFilePath", "/run/xtables.lock");
        d.put("iptablesLockTimeout", "0s");
        d.put("iptablesLockProbeInterval", "50ms");
        d.put("iptablesMarkMask", "0xffff0000");
        d.put("iptablesFilterAllowAction", "Accept");
        d.put("iptablesFilterDenyAction", "Drop");
        d.put("iptablesMangleAllowAction", "Accept");
        d.put("ipsetsRefreshInterval", "90s");
        d.put("maxIpsetSize", "1048576");
        // nftables
        d.put("nftablesMode", "Auto");
        d.put("nftablesRefreshInterval", "180s");
        d.put("nftablesMarkMask", "0xffff0000");
        d.put("nftablesFilterAllowAction", "Accept");
        d.put("nftablesFilterDenyAction", "Drop");
        d.put("nftablesMangleAllowAction", "Accept");
        // XDP
        d.put("xdpEnabled", "true");
        d.put("xdpRefreshInterval", "90s");
        d.put("genericXDPEnabled", "false");
        // eBPF
        d.put("bpfEnabled", "false");
        d.put("bpfDisableUnprivileged", "true");
        d.put("bpfLogLevel", "Off");
        d.put("bpfDataIfacePattern", "^((en|wl|ww|sl|ib)[Popsx].*|(eth|wlan|wwan|bond).*)");
        d.put("bpfConnectTimeLoadBalancing", "TCP");
        d.put("bpfHostNetworkedNATWithoutCTLB", "Enabled");
        d.put("bpfExternalServiceMode", "Tunnel");
        d.put("bpfKubeProxyIptablesCleanupEnabled", "true");
        d.put("bpfKubeProxyMinSyncPeriod", "1s");
        d.put("bpfPSNATPorts", "20000:29999");
        d.put("bpfMapSizeNATFrontend", "65536");
        d.put("bpfMapSizeNATBackend", "262144");
        d.put("bpfMapSizeNATAffinity", "65536");
        d.put("bpfMapSizeRoute", "262144");
        d.put("bpfMapSizeConntrack", "512000");
        d.put("bpfMapSizeConntrackScaling", "DoubleIfFull");
        d.put("bpfMapSizeConntrackCleanupQueue", "100000");
        d.put("bpfMapSizePerCpuConntrack", "0");
        d.put("bpfMapSizeIPSets", "1048576");
        d.put("bpfMapSizeIfState", "1000");
        d.put("bpfEnforceRPF", "Loose");
        d.put("bpfPolicyDebugEnabled", "true");
        d.put("bpfForceTrackPacketsFromIfaces", "docker+");
        d.put("bpfExtToServiceConnmark", "0");
        d.put("bpfHostConntrackBypass", "false");
        d.put("bpfConntrackLogLevel", "Off");
        d.put("bpfAttachType", "TCX");
        d.put("bpfProfiling", "Disabled");
        d.put("bpfRedirectToPeer", "Enabled");
        d.put("bpfExportBufferSizeMB", "1");
        // Encapsulation and WireGuard (ipipEnabled/vxlanEnabled: unset = decided by the pools)
        d.put("ipipMTU", "0");
        d.put("allowIPIPPacketsFromWorkloads", "false");
        d.put("vxlanMTU", "0");
        d.put("vxlanMTUV6", "0");
        d.put("vxlanPort", "4789");
        d.put("vxlanVNI", "4096");
        d.put("allowVXLANPacketsFromWorkloads", "false");
        d.put("wireguardEnabled", "false");
        d.put("wireguardEnabledV6", "false");
        d.put("wireguardListeningPort", "51820");
        d.put("wireguardListeningPortV6", "51821");
        d.put("wireguardRoutingRulePriority", "99");
        d.put("wireguardInterfaceName", "wireguard.cali");
        d.put("wireguardInterfaceNameV6", "wg-v6.cali");
        d.put("wireguardMTU", "0");
        d.put("wireguardMTUV6", "0");
        d.put("wireguardHostEncryptionEnabled", "false");
        d.put("wireguardKeepAlive", "0s");
        d.put("wireguardThreadingEnabled", "false");
        // Health, metrics, debugging
        d.put("healthEnabled", "false");
        d.put("healthHost", "localhost");
        d.put("healthPort", "9099");
        d.put("prometheusMetricsEnabled", "false");
        d.put("prometheusMetricsPort", "9091");
        d.put("prometheusGoMetricsEnabled", "true");
        d.put("prometheusProcessMetricsEnabled", "true");
        d.put("prometheusWireGuardMetricsEnabled", "true");
        d.put("debugDisableLogDropping", "false");
        d.put("debugSimulateCalcGraphHangAfter", "0s");
        d.put("debugSimulateDataplaneHangAfter", "0s");
        d.put("debugSimulateDataplaneApplyDelay", "0s");
        d.put("debugHost", "localhost");
        d.put("debugPort", "0");
        d.put("goGCThreshold", "40");
        d.put("goMemoryLimitMB", "-1");
        d.put("goMaxProcs", "-1");
        // Reporting, policy sync, flow logs
        d.put("reportingInterval", "30s");
        d.put("reportingTTL", "90s");
        d.put("endpointReportingEnabled", "false");
        d.put("endpointReportingDelay", "1s");
        d.put("endpointStatusPathPrefix", "/var/run/calico");
        d.put("usageReportingEnabled", "true");
        d.put("usageReportingInitialDelay", "300s");
        d.put("usageReportingInterval", "86400s");
        d.put("flowLogsFlushInterval", "15s"); // Calico 3.30+: goldmane's aggregation window
        d.put("flowLogsLocalReporter", "Disabled");
        d.put("flowLogsPolicyEvaluationMode", "Continuous");
        d.put("flowLogsCollectorDebugTrace", "false");
        return Map.copyOf(d);
    }
}
