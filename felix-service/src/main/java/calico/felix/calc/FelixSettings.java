package calico.felix.calc;

import calico.api.model.FelixConfigurationSpec.ProtoPort;
import calico.api.model.FelixConfigurationSpec.RouteTableRange;
import calico.api.model.Port;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Felix's effective configuration, typed: what a {@link DataplaneUpdate.ConfigUpdate} carries.
 * {@link ConfigResolver} validates every source once ({@link ConfigFields#normalize}, naming the
 * variable or resource field and the reason) and builds this from the resolved values with
 * {@link #from}; consumers read the typed components and never look a setting up by key.
 * Enumerations are in the {@code projectcalico.org/v3} spelling of calico-api's
 * {@code FelixConfigurationEnums}.
 *
 * @param interfacePrefixes workload interface prefixes ({@code interfacePrefix}, a comma-separated list
 *                          such as {@code cali,tap}); never empty
 * @param ipipEnabled       empty when unset: Felix then decides from the IP pools' modes
 * @param vxlanEnabled      empty when unset: likewise
 * @param ipipMtu           0 means "detect from the host's MTU" (likewise the other MTUs)
 * @param iptablesMarkMask  the mark bits felix may use ({@code iptablesMarkMask})
 * @param flowLogsGoldmaneServer goldmane's address, empty when flow logs are off (see {@link #flowLogsEnabled})
 * @param natOutgoingExclusions {@code IPPoolsOnly} (natOutgoing traffic to any IP pool is not masqueraded) or
 *                          {@code IPPoolsAndHostIPs} (nor to any Calico host's address)
 * @param natPortRange      the source ports masquerading maps TCP and UDP to ({@code natPortRange}); empty:
 *                          the kernel's choice
 * @param mtuIfacePattern   the host interfaces whose smallest MTU is the host MTU (a regular expression)
 * @param vxlanMtuV6        {@code vxlanMTUV6}; 0 means "detect" as for the other MTUs
 * @param wireguardEnabledV6 {@code wireguardEnabledV6}
 * @param wireguardMtuV6    {@code wireguardMTUV6}; 0 means "detect"
 * @param requireMtuFile    {@code requireMTUFile}: felix is not ready while the MTU file cannot be written
 * @param routeSource       {@code CalicoIPAM} (routes per IPAM block, Calico's default) or {@code WorkloadIPs}
 *                          (routes per workload address)
 * @param wireguardListeningPortV6 {@code wireguardListeningPortV6}
 * @param wireguardInterfaceNameV6 {@code wireguardInterfaceNameV6}
 * @param routeTableRanges  the routing tables felix may use ({@code routeTableRanges}, else the deprecated
 *                          {@code routeTableRange}, else Calico's 1-250); see {@link #wireguardTableIndex}
 * @param flowLogsPendingTraces {@code flowLogsPolicyEvaluationMode: Continuous} (Calico's default): flow logs
 *                          carry the pending trace (what staged policies would do); {@code None}: they do not
 * @param effective         every setting in its printed form, for display only (the admin API's
 *                          {@code /config}); read settings through the components above
 * @param healthTimeoutOverrides {@code healthTimeoutOverrides}: a health reporter's timeout by its name
 *                          (Calico's {@code name=duration,…})
 * @param externalNodesCidrs {@code externalNodesList}: hosts outside the cluster that may send IPIP/VXLAN
 *                          like Calico nodes (members of {@code all-hosts-net} beside the nodes' addresses)
 * @param workloadSourceSpoofing {@code workloadSourceSpoofing: Any}: a workload endpoint's
 *                          {@code allowSpoofedSourcePrefixes} may pass the anti-spoofing check; {@code Disabled}:
 *                          they are ignored
 * @param interfaceExclude  {@code interfaceExclude}: host interfaces felix leaves alone, each an exact name or a
 *                          {@code /regex/} (see {@link #isExcludedInterface})
 * @param removeExternalRoutes {@code removeExternalRoutes}: routes to workload interfaces that felix did not add
 *                          (another protocol) are removed
 * @param endpointStatusPathPrefix {@code endpointStatusPathPrefix}: where per-endpoint status files go; empty
 *                          (Calico's {@code none}): no files
 * @param serviceLoopPrevention {@code serviceLoopPrevention}: {@code Drop} (Calico's default), {@code Reject} or
 *                          {@code Disabled}: what happens to forwarded traffic to an advertised service range
 *                          that kube-proxy did not DNAT (see {@link DataplaneUpdate.ServiceCidrsUpdate})
 * @param kubeNodePortRanges {@code kubeNodePortRanges}: Kubernetes' NodePort ranges (Calico's default
 *                          {@code 30000:32767}); with kube-proxy in IPVS mode, traffic to this host's addresses at
 *                          these ports is policed as forwarded traffic
 * @param bpf               the eBPF driver's conntrack size and timeouts ({@code bpfMapSizeConntrack},
 *                          {@code bpfConntrackTimeouts})
 */
public record FelixSettings(
        List<String> interfacePrefixes,
        boolean healthEnabled,
        String healthHost,
        int healthPort,
        boolean prometheusMetricsEnabled,
        int prometheusMetricsPort,
        String logSeverityScreen,
        String defaultEndpointToHostAction,
        String chainInsertMode,
        String iptablesBackend,
        String nftablesMode,
        String iptablesFilterAllowAction,
        String iptablesFilterDenyAction,
        String nftablesFilterAllowAction,
        String nftablesFilterDenyAction,
        long iptablesMarkMask,
        boolean ipv6Support,
        boolean ipForwarding,
        boolean bpfEnabled,
        List<ProtoPort> failsafeInboundHostPorts,
        List<ProtoPort> failsafeOutboundHostPorts,
        Optional<Boolean> ipipEnabled,
        int ipipMtu,
        Optional<Boolean> vxlanEnabled,
        int vxlanMtu,
        int vxlanPort,
        int vxlanVni,
        boolean wireguardEnabled,
        int wireguardMtu,
        int wireguardListeningPort,
        String wireguardInterfaceName,
        int wireguardRoutingRulePriority,
        Duration wireguardKeepAlive,
        boolean wireguardHostEncryptionEnabled,
        Duration routeRefreshInterval,
        Duration iptablesRefreshInterval,
        String iptablesLockFilePath,
        Duration iptablesLockTimeout,
        Duration iptablesLockProbeInterval,
        Duration reportingInterval,
        Duration reportingTtl,
        String flowLogsGoldmaneServer,
        Duration flowLogsFlushInterval,
        String natOutgoingExclusions,
        Optional<Port> natPortRange,
        String mtuIfacePattern,
        int vxlanMtuV6,
        boolean wireguardEnabledV6,
        int wireguardMtuV6,
        boolean requireMtuFile,
        String routeSource,
        int wireguardListeningPortV6,
        String wireguardInterfaceNameV6,
        List<RouteTableRange> routeTableRanges,
        Map<String, String> effective,
        boolean floatingIps,
        boolean flowLogsPendingTraces,
        Map<String, Duration> healthTimeoutOverrides,
        List<String> externalNodesCidrs,
        boolean workloadSourceSpoofing,
        List<String> interfaceExclude,
        boolean removeExternalRoutes,
        String endpointStatusPathPrefix,
        String serviceLoopPrevention,
        List<Port> kubeNodePortRanges,
        BpfSettings bpf) {

    public FelixSettings {
        externalNodesCidrs = externalNodesCidrs == null ? List.of() : List.copyOf(externalNodesCidrs);
        interfaceExclude = interfaceExclude == null ? List.of() : List.copyOf(interfaceExclude);
        kubeNodePortRanges = kubeNodePortRanges == null ? List.of() : List.copyOf(kubeNodePortRanges);
        endpointStatusPathPrefix = endpointStatusPathPrefix == null || endpointStatusPathPrefix.strip()
                .equalsIgnoreCase("none") ? "" : endpointStatusPathPrefix.strip();
        interfacePrefixes = List.copyOf(interfacePrefixes);
        if (interfacePrefixes.isEmpty()) {
            throw new IllegalArgumentException("interfacePrefix: at least one prefix");
        }
        failsafeInboundHostPorts = List.copyOf(failsafeInboundHostPorts);
        failsafeOutboundHostPorts = List.copyOf(failsafeOutboundHostPorts);
        routeTableRanges = routeTableRanges == null || routeTableRanges.isEmpty() ? DEFAULT_ROUTE_TABLES
                : List.copyOf(routeTableRanges);
        flowLogsGoldmaneServer = flowLogsGoldmaneServer == null ? "" : flowLogsGoldmaneServer.strip();
        effective = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(effective));
        healthTimeoutOverrides = healthTimeoutOverrides == null ? Map.of() : Map.copyOf(healthTimeoutOverrides);
    }

    /**
     * {@return whether flow logs are on}: {@code flowLogsGoldmaneServer} is set. The one place
     * this is decided; the rule renderer (NFLOG rules), the graph's flow-log lookups and the
     * flow-log collector all ask here.
     */
    /**
     * {@return the settings felix does not act on that are set away from their default} (field → value; see
     * {@link ConfigSupport}): what its status lists and its {@code felix_config_unsupported_fields} counts.
     */
    public java.util.SortedMap<String, String> unsupportedSettings() {
        return ConfigSupport.ignored(effective, java.util.Set.of());
    }

    public boolean flowLogsEnabled() {
        return !flowLogsGoldmaneServer.isEmpty();
    }

    /** Calico's route table range when neither {@code routeTableRanges} nor {@code routeTableRange} is set. */
    static final List<RouteTableRange> DEFAULT_ROUTE_TABLES = List.of(new RouteTableRange(1, 250));
    /** Tables felix never allocates (local, main, default), as Calico reserves them. */
    private static final int RESERVED_MIN = 253;
    private static final int RESERVED_MAX = 255;

    /**
     * {@return the routing table of IPv4 WireGuard}: the first index of {@link #routeTableRanges}
     * outside the kernel's reserved 253-255, as Calico's felix allocates it (always, whether or not
     * WireGuard is on, so that a disabled WireGuard's table can be tidied); 1 by default; 0 when
     * the ranges hold no usable table.
     */
    public long wireguardTableIndex() {
        return routeTableIndex(0);
    }

    /** {@return the routing table of IPv6 WireGuard}: the second index allocated as above; 2 by default, 0 when there is none. */
    public long wireguardTableIndexV6() {
        return routeTableIndex(1);
    }

    /** The {@code n}-th (0-based) usable table index of the ranges; 0 when they hold too few (Calico then leaves that WireGuard off). */
    private long routeTableIndex(int n) {
        int seen = 0;
        for (RouteTableRange r : routeTableRanges) {
            for (long i = Math.max(1, r.min()); i <= r.max(); i++) {
                if (i >= RESERVED_MIN && i <= RESERVED_MAX) {
                    continue;
                }
                if (seen++ == n) {
                    return i;
                }
            }
        }
        return 0;
    }

    /** {@return whether natOutgoing traffic to Calico hosts' addresses stays unmasqueraded} ({@code IPPoolsAndHostIPs}) */
    public boolean natOutgoingExcludesHosts() {
        return natOutgoingExclusions.equals("IPPoolsAndHostIPs");
    }

    /** {@return whether routes follow IPAM blocks} ({@code routeSource: CalicoIPAM}) rather than workload addresses. */
    public boolean routesFromIpamBlocks() {
        return !"WorkloadIPs".equals(routeSource);
    }

    /**
     * {@return whether felix leaves {@code interfaceName} alone} ({@code interfaceExclude}): an entry is the exact
     * name, or a regular expression between slashes that finds a match in it (Calico's syntax).
     */
    public boolean isExcludedInterface(String interfaceName) {
        for (String e : interfaceExclude) {
            if (e.length() > 1 && e.startsWith("/") && e.endsWith("/")) {
                if (java.util.regex.Pattern.compile(e.substring(1, e.length() - 1)).matcher(interfaceName).find()) {
                    return true;
                }
            } else if (e.equals(interfaceName)) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether {@code interfaceName} is a workload interface}: it starts with one of the prefixes. */
    public boolean isWorkloadInterface(String interfaceName) {
        return interfacePrefixes.stream().anyMatch(interfaceName::startsWith);
    }

    /**
     * {@return the settings of a resolved configuration map} (field name to printed value, as
     * {@link ConfigResolver} resolves it). A value the resolver would have refused, or one that
     * is missing, reads as Calico's default.
     */
    public static FelixSettings from(Map<String, String> values) {
        Reader r = new Reader(values);
        return new FelixSettings(
                r.list("interfacePrefix"),
                r.bool("healthEnabled"),
                r.text("healthHost"),
                r.integer("healthPort"),
                r.bool("prometheusMetricsEnabled"),
                r.integer("prometheusMetricsPort"),
                r.text("logSeverityScreen"),
                r.text("defaultEndpointToHostAction"),
                r.text("chainInsertMode"),
                r.text("iptablesBackend"),
                r.text("nftablesMode"),
                r.text("iptablesFilterAllowAction"),
                r.text("iptablesFilterDenyAction"),
                r.text("nftablesFilterAllowAction"),
                r.text("nftablesFilterDenyAction"),
                Long.decode(r.text("iptablesMarkMask")),
                r.bool("ipv6Support"),
                r.text("ipForwarding").equals("Enabled"),
                r.bool("bpfEnabled"),
                r.protoPorts("failsafeInboundHostPorts"),
                r.protoPorts("failsafeOutboundHostPorts"),
                r.optionalBool("ipipEnabled"),
                r.integer("ipipMTU"),
                r.optionalBool("vxlanEnabled"),
                r.integer("vxlanMTU"),
                r.integer("vxlanPort"),
                r.integer("vxlanVNI"),
                r.bool("wireguardEnabled"),
                r.integer("wireguardMTU"),
                r.integer("wireguardListeningPort"),
                r.text("wireguardInterfaceName"),
                r.integer("wireguardRoutingRulePriority"),
                r.duration("wireguardKeepAlive"),
                r.bool("wireguardHostEncryptionEnabled"),
                r.duration("routeRefreshInterval"),
                r.duration("iptablesRefreshInterval"),
                r.text("iptablesLockFilePath"),
                r.duration("iptablesLockTimeout"),
                r.duration("iptablesLockProbeInterval"),
                r.duration("reportingInterval"),
                r.duration("reportingTTL"),
                r.text("flowLogsGoldmaneServer"),
                r.duration("flowLogsFlushInterval"),
                r.text("natOutgoingExclusions"),
                r.portRange("natPortRange"),
                r.text("mtuIfacePattern"),
                r.integer("vxlanMTUV6"),
                r.bool("wireguardEnabledV6"),
                r.integer("wireguardMTUV6"),
                r.bool("requireMTUFile"),
                r.text("routeSource"),
                r.integer("wireguardListeningPortV6"),
                r.text("wireguardInterfaceNameV6"),
                r.tableRanges(),
                values,
                r.text("floatingIPs").equalsIgnoreCase("Enabled"),
                r.text("flowLogsPolicyEvaluationMode").equalsIgnoreCase("Continuous"),
                r.durations("healthTimeoutOverrides"),
                r.list("externalNodesList"),
                r.text("workloadSourceSpoofing").equalsIgnoreCase("Any"),
                r.list("interfaceExclude"),
                r.bool("removeExternalRoutes"),
                r.text("endpointStatusPathPrefix"),
                r.text("serviceLoopPrevention"),
                r.list("kubeNodePortRanges").stream().map(Port::parse).toList(),
                BpfSettings.of(r.integer("bpfMapSizeConntrack"), r.list("bpfConntrackTimeouts"),
                        r.text("bpfAttachType")));
    }

    /** {@return Calico's defaults, typed}. */
    public static FelixSettings defaults() {
        return Defaults.VALUE;
    }

    /** Built on first use (after the tables it reads). */
    private static final class Defaults {
        static final FelixSettings VALUE = from(Map.of());
    }

    /** Reads one setting: the map's value when valid, else Calico's default. */
    private record Reader(Map<String, String> values) {

        String text(String field) {
            String v = values.get(field);
            if (v != null && !v.isEmpty()) {
                try {
                    return ConfigFields.normalize(field, v);
                } catch (IllegalArgumentException e) {
                    // fall through to the default
                }
            }
            return FelixDefaults.VALUES.getOrDefault(field, "");
        }

        List<String> list(String field) {
            return ConfigFields.splitList(text(field));
        }

        boolean bool(String field) {
            return Boolean.parseBoolean(text(field));
        }

        Optional<Boolean> optionalBool(String field) {
            String v = text(field);
            return v.isEmpty() ? Optional.empty() : Optional.of(Boolean.parseBoolean(v));
        }

        int integer(String field) {
            return Integer.parseInt(text(field));
        }

        List<ProtoPort> protoPorts(String field) {
            return ConfigFields.parseProtoPorts(text(field));
        }

        Optional<Port> portRange(String field) {
            String v = text(field);
            return v.isEmpty() ? Optional.empty() : Optional.of(Port.parse(v));
        }

        Duration duration(String field) {
            return GoDurations.parse(text(field));
        }

        /** A {@code name=duration,…} field (validated already). */
        Map<String, Duration> durations(String field) {
            Map<String, Duration> out = new java.util.LinkedHashMap<>();
            for (String kv : list(field)) {
                int eq = kv.indexOf('=');
                out.put(kv.substring(0, eq).trim(), GoDurations.parse(kv.substring(eq + 1)));
            }
            return out;
        }

        /** {@code routeTableRanges}, else the deprecated {@code routeTableRange}, else none (Calico's default). */
        List<RouteTableRange> tableRanges() {
            List<String> ranges = list("routeTableRanges");
            if (ranges.isEmpty()) {
                ranges = list("routeTableRange");
            }
            return ranges.stream().map(t -> {
                int dash = t.indexOf('-');
                return new RouteTableRange(Integer.parseInt(t.substring(0, dash)), Integer.parseInt(t.substring(dash + 1)));
            }).toList();
        }
    }

    /** Go duration text ("1h2m3.5s", "50ms") to a {@link Duration}; the text was validated already. */
    public static final class GoDurations {

        private GoDurations() {
        }

        public static Duration parse(String text) {
            String t = text.trim();
            boolean negative = t.startsWith("-");
            if (negative || t.startsWith("+")) {
                t = t.substring(1);
            }
            if (t.equals("0")) {
                return Duration.ZERO;
            }
            java.math.BigDecimal nanos = java.math.BigDecimal.ZERO;
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)").matcher(t);
            while (m.find()) {
                long unit = switch (m.group(2)) {
                    case "ns" -> 1L;
                    case "us", "µs", "μs" -> 1_000L;
                    case "ms" -> 1_000_000L;
                    case "s" -> 1_000_000_000L;
                    case "m" -> 60_000_000_000L;
                    default -> 3_600_000_000_000L;
                };
                nanos = nanos.add(new java.math.BigDecimal(m.group(1)).multiply(java.math.BigDecimal.valueOf(unit)));
            }
            Duration d = Duration.ofNanos(nanos.longValue());
            return negative ? d.negated() : d;
        }
    }
}
