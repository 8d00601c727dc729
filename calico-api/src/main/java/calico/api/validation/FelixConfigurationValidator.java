package calico.api.validation;

import calico.api.model.FelixConfiguration;
import calico.api.model.FelixConfigurationEnums;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.FelixConfigurationSpec.ProtoPort;
import calico.api.model.FelixConfigurationSpec.RouteTableRange;
import calico.api.model.Port;
import java.lang.reflect.RecordComponent;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

/**
 * Checks Felix configuration: durations (Go syntax, not negative), mode strings, ports, MTUs,
 * failsafe ports, route-table ranges and addresses. Every field is optional; absent means
 * Felix's default, so only present fields are checked.
 */
final class FelixConfigurationValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");
    private static final Map<String, RecordComponent> SPEC_FIELDS = java.util.Arrays.stream(
            FelixConfigurationSpec.class.getRecordComponents()).collect(Collectors.toMap(RecordComponent::getName, c -> c));
    private static final Pattern HOST = Pattern.compile("[a-zA-Z0-9:._+-]{1,64}");
    private static final Pattern IFACE_FILTER = Pattern.compile("[a-zA-Z0-9:._+-]{1,15}");
    private static final Pattern INTERFACE = Pattern.compile("[a-zA-Z0-9_.-]{1,15}");
    private static final Pattern KEY_VALUE = Pattern.compile("\\s*\\w+=.*");
    private static final Pattern HEALTH_NAME = Pattern.compile("[a-zA-Z0-9_ -]+");
    /** Felix's Kubernetes node-port ranges go into one iptables multiport match: at most 7 ranges. */
    static final int MAX_NODE_PORT_RANGES = 7;

    private FelixConfigurationValidator() {
    }

    static void validate(FelixConfiguration fc, Errors errors) {
        MetadataValidator.validate(fc.metadata(), fc.resourceKind(), true, errors);
        FelixConfigurationSpec s = fc.spec();
        if (s == null) {
            return;
        }
        durations(s, errors);
        enums(s, errors);
        ports(s, errors);
        mtus(s, errors);
        addresses(s, errors);
        failsafe(s.failsafeInboundHostPorts(), "failsafeInboundHostPorts", errors);
        failsafe(s.failsafeOutboundHostPorts(), "failsafeOutboundHostPorts", errors);
        routeTables(s, errors);
        misc(s, errors);
    }

    private static void durations(FelixConfigurationSpec s, Errors errors) {
        for (String field : FelixConfigurationSpec.DURATION_FIELDS) {
            Durations.checkNonNegative((String) read(s, SPEC_FIELDS.get(field)), SPEC.field(field), errors);
        }
        var t = s.bpfConntrackTimeouts();
        if (t != null) {
            FieldPath tp = SPEC.field("bpfConntrackTimeouts");
            Map<String, String> ct = new TreeMap<>();
            ct.put("creationGracePeriod", t.creationGracePeriod());
            ct.put("tcpSynSent", t.tcpSynSent());
            ct.put("tcpEstablished", t.tcpEstablished());
            ct.put("tcpFinsSeen", t.tcpFinsSeen());
            ct.put("tcpResetSeen", t.tcpResetSeen());
            ct.put("udpTimeout", t.udpTimeout());
            ct.put("genericTimeout", t.genericTimeout());
            ct.put("icmpTimeout", t.icmpTimeout());
            // "Auto" lets Felix take the value from the kernel's conntrack settings.
            ct.forEach((field, value) -> {
                if (!"Auto".equals(value)) {
                    Durations.checkNonNegative(value, tp.field(field), errors);
                }
            });
        }
        for (int i = 0; i < s.healthTimeoutOverrides().size(); i++) {
            var o = s.healthTimeoutOverrides().get(i);
            FieldPath op = SPEC.field("healthTimeoutOverrides").index(i);
            if (o.name() == null || !HEALTH_NAME.matcher(o.name()).matches()) {
                errors.add(op.field("name"), "must be letters, digits, '_', '-' or spaces");
            }
            if (o.timeout() == null) {
                errors.add(op.field("timeout"), "is required");
            }
            Durations.checkNonNegative(o.timeout(), op.field("timeout"), errors);
        }
        nonNegative(s.iptablesPostWriteCheckIntervalSecs(), "iptablesPostWriteCheckIntervalSecs", errors);
        nonNegative(s.iptablesLockTimeoutSecs(), "iptablesLockTimeoutSecs", errors);
        nonNegative(s.iptablesLockProbeIntervalMillis(), "iptablesLockProbeIntervalMillis", errors);
        nonNegative(s.reportingIntervalSecs(), "reportingIntervalSecs", errors);
        nonNegative(s.reportingTTLSecs(), "reportingTTLSecs", errors);
    }

    /**
     * Mode strings, against the one table of them ({@link FelixConfigurationEnums}). Spellings
     * are Calico's; fields Calico checks with a case-sensitive pattern are case-sensitive here,
     * the rest (Felix parses them case-insensitively) are not.
     */
    private static void enums(FelixConfigurationSpec s, Errors errors) {
        // In the table's order, which is the order errors are reported in.
        for (Map.Entry<String, FelixConfigurationEnums.Allowed> field : FelixConfigurationEnums.FIELDS.entrySet()) {
            FelixConfigurationEnums.Allowed allowed = field.getValue();
            RecordComponent rc = SPEC_FIELDS.get(field.getKey());
            Object v;
            v = read(s, rc);
            if (v == null) {
                continue;
            }
            String text = v.toString();
            if (allowed.anyCase()) {
                if (allowed.values().stream().noneMatch(a -> a.equalsIgnoreCase(text))) {
                    errors.add(SPEC.field(rc.getName()), "must be one of " + sorted(allowed.values()) + " (any case)");
                }
            } else if (!allowed.values().contains(text)) {
                errors.add(SPEC.field(rc.getName()), "must be one of " + sorted(allowed.values()));
            }
        }
    }

    private static Object read(FelixConfigurationSpec s, RecordComponent rc) {
        try {
            return rc.getAccessor().invoke(s);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read spec." + rc.getName(), e);
        }
    }

    private static void ports(FelixConfigurationSpec s, Errors errors) {
        port(s.healthPort(), "healthPort", errors);
        port(s.prometheusMetricsPort(), "prometheusMetricsPort", errors);
        port(s.debugPort(), "debugPort", errors);
        port(s.vxlanPort(), "vxlanPort", errors);
        port(s.wireguardListeningPort(), "wireguardListeningPort", errors);
        port(s.wireguardListeningPortV6(), "wireguardListeningPortV6", errors);
        port(s.metadataPort(), "metadataPort", errors);
        range(s.natPortRange(), SPEC.field("natPortRange"), errors);
        range(s.bpfPSNATPorts(), SPEC.field("bpfPSNATPorts"), errors);
        if (s.kubeNodePortRanges().size() > MAX_NODE_PORT_RANGES) {
            errors.add(SPEC.field("kubeNodePortRanges"), "at most " + MAX_NODE_PORT_RANGES + " ranges");
        }
        for (int i = 0; i < s.kubeNodePortRanges().size(); i++) {
            range(s.kubeNodePortRanges().get(i), SPEC.field("kubeNodePortRanges").index(i), errors);
        }
        if (s.vxlanVNI() != null && (s.vxlanVNI() < 1 || s.vxlanVNI() > 0xFF_FFFF)) {
            errors.add(SPEC.field("vxlanVNI"), "must be between 1 and 16777215");
        }
    }

    /** 0 asks Felix to detect the MTU; otherwise at least the IP version's minimum link MTU. */
    private static void mtus(FelixConfigurationSpec s, Errors errors) {
        mtu(s.ipipMTU(), "ipipMTU", 68, errors);
        mtu(s.vxlanMTU(), "vxlanMTU", 68, errors);
        mtu(s.wireguardMTU(), "wireguardMTU", 68, errors);
        mtu(s.vxlanMTUV6(), "vxlanMTUV6", 1280, errors);
        mtu(s.wireguardMTUV6(), "wireguardMTUV6", 1280, errors);
    }

    private static void addresses(FelixConfigurationSpec s, Errors errors) {
        ip(s.natOutgoingAddress(), 4, "natOutgoingAddress", errors);
        ip(s.deviceRouteSourceAddress(), 4, "deviceRouteSourceAddress", errors);
        ip(s.deviceRouteSourceAddressIPv6(), 6, "deviceRouteSourceAddressIPv6", errors);
        for (int i = 0; i < s.externalNodesList().size(); i++) {
            FieldPath p = SPEC.field("externalNodesList").index(i);
            Cidrs.cidrOrIp(s.externalNodesList().get(i), p, errors).filter(c -> c.version() != 4)
                    .ifPresent(c -> errors.add(p, "must be an IPv4 CIDR"));
        }
        Cidrs.cidrsOrIps(s.bpfDSROptoutCIDRs(), SPEC.field("bpfDSROptoutCIDRs"), errors);
        Cidrs.cidrsOrIps(s.bpfExcludeCIDRsFromNAT(), SPEC.field("bpfExcludeCIDRsFromNAT"), errors);
        host(s.healthHost(), "healthHost", errors);
        host(s.prometheusMetricsHost(), "prometheusMetricsHost", errors);
        host(s.debugHost(), "debugHost", errors);
    }

    /** Failsafe ports: protocol TCP, UDP or SCTP (exact case), a port, and optionally a CIDR. */
    private static void failsafe(List<ProtoPort> ports, String field, Errors errors) {
        for (int i = 0; i < ports.size(); i++) {
            ProtoPort p = ports.get(i);
            FieldPath pp = SPEC.field(field).index(i);
            if (p.protocol() == null || !Set.of("TCP", "UDP", "SCTP").contains(p.protocol())) {
                errors.add(pp.field("protocol"), "must be TCP, UDP or SCTP");
            }
            if (p.port() == null || p.port() < 1 || p.port() > 65535) {
                errors.add(pp.field("port"), "must be between 1 and 65535");
            }
            if (p.net() != null && !p.net().isEmpty()) {
                Cidrs.cidrOrIp(p.net(), pp.field("net"), errors);
            }
        }
    }

    private static void routeTables(FelixConfigurationSpec s, Errors errors) {
        RouteTableRange r = s.routeTableRange();
        if (r != null) {
            if (r.min() == null || r.max() == null || r.min() < 1 || r.max() < r.min() || r.max() > 250) {
                errors.add(SPEC.field("routeTableRange"), "must be a range of route table indices within 1..250");
            }
            if (!s.routeTableRanges().isEmpty()) {
                errors.add(SPEC.field("routeTableRange"), "cannot be set together with routeTableRanges");
            }
        }
        long tables = 0;
        for (int i = 0; i < s.routeTableRanges().size(); i++) {
            RouteTableRange rr = s.routeTableRanges().get(i);
            FieldPath rp = SPEC.field("routeTableRanges").index(i);
            if (rr.min() == null || rr.max() == null) {
                errors.add(rp, "min and max are required");
                continue;
            }
            if (rr.min() < 1) {
                errors.add(rp.field("min"), "cannot target indices below 1");
            }
            if (rr.min() > rr.max()) {
                errors.add(rp, "min must not exceed max");
            }
            tables += Math.max(0, (long) rr.max() - rr.min() + 1);
        }
        if (tables > 0xFFFF) {
            errors.add(SPEC.field("routeTableRanges"), "targets too many tables (at most 65535)");
        }
        if (s.deviceRouteProtocol() != null && (s.deviceRouteProtocol() < 0 || s.deviceRouteProtocol() > 255)) {
            errors.add(SPEC.field("deviceRouteProtocol"), "must be between 0 and 255");
        }
    }

    private static void misc(FelixConfigurationSpec s, Errors errors) {
        if (s.openstackRegion() != null && !s.openstackRegion().isEmpty()) {
            // The region becomes part of a namespace name "openstack-region-<region>".
            int max = Names.LABEL_MAX - "openstack-region-".length();
            if (s.openstackRegion().length() > max) {
                errors.add(SPEC.field("openstackRegion"), "must be at most " + max + " characters");
            } else if (!Names.isDnsLabel(s.openstackRegion())) {
                errors.add(SPEC.field("openstackRegion"), "must be a valid DNS label");
            }
        }
        for (String field : List.of("featureDetectOverride", "featureGates")) {
            String v = field.equals("featureGates") ? s.featureGates() : s.featureDetectOverride();
            if (v == null || v.isBlank()) {
                continue;
            }
            for (String item : v.split(",")) {
                if (!item.isEmpty() && !KEY_VALUE.matcher(item).matches()) {
                    errors.add(SPEC.field(field), "must be a comma-separated list of key=value pairs");
                    break;
                }
            }
        }
        regex(s.mtuIfacePattern(), "mtuIfacePattern", errors);
        regex(s.logDebugFilenameRegex(), "logDebugFilenameRegex", errors);
        regex(s.bpfDataIfacePattern(), "bpfDataIfacePattern", errors);
        regex(s.bpfL3IfacePattern(), "bpfL3IfacePattern", errors);
        for (String key : new TreeMap<>(s.bpfLogFilters()).keySet()) {
            if (!key.equals("all") && !INTERFACE.matcher(key).matches()) {
                errors.add(SPEC.field("bpfLogFilters").key(key), "key must be an interface name or 'all'");
            }
        }
        for (int i = 0; i < s.bpfForceTrackPacketsFromIfaces().size(); i++) {
            String iface = s.bpfForceTrackPacketsFromIfaces().get(i);
            if (iface == null || !IFACE_FILTER.matcher(iface).matches()) {
                errors.add(SPEC.field("bpfForceTrackPacketsFromIfaces").index(i),
                        "must be 1-15 characters of letters, digits, ':', '.', '_', '+' or '-'");
            }
        }
        if (s.iptablesMarkMask() != null && (s.iptablesMarkMask() < 0 || s.iptablesMarkMask() > 0xFFFF_FFFFL)) {
            errors.add(SPEC.field("iptablesMarkMask"), "must be a 32-bit mask");
        }
        if (s.nftablesMarkMask() != null && (s.nftablesMarkMask() < 0 || s.nftablesMarkMask() > 0xFFFF_FFFFL)) {
            errors.add(SPEC.field("nftablesMarkMask"), "must be a 32-bit mask");
        }
        positive(s.maxIpsetSize(), "maxIpsetSize", errors);
        positive(s.bpfMapSizeNATFrontend(), "bpfMapSizeNATFrontend", errors);
        positive(s.bpfMapSizeNATBackend(), "bpfMapSizeNATBackend", errors);
        positive(s.bpfMapSizeNATAffinity(), "bpfMapSizeNATAffinity", errors);
        positive(s.bpfMapSizeRoute(), "bpfMapSizeRoute", errors);
        positive(s.bpfMapSizeConntrack(), "bpfMapSizeConntrack", errors);
        positive(s.bpfMapSizeIPSets(), "bpfMapSizeIPSets", errors);
        positive(s.bpfMapSizeIfState(), "bpfMapSizeIfState", errors);
        positive(s.bpfExportBufferSizeMB(), "bpfExportBufferSizeMB", errors);
        nonNegative(s.bpfMapSizeConntrackCleanupQueue(), "bpfMapSizeConntrackCleanupQueue", errors);
        nonNegative(s.bpfMapSizePerCpuConntrack(), "bpfMapSizePerCpuConntrack", errors);
        nonNegative(s.bpfExtToServiceConnmark(), "bpfExtToServiceConnmark", errors);
        for (String f : List.of("goGCThreshold", "goMemoryLimitMB", "goMaxProcs")) {
            Integer v = switch (f) {
                case "goGCThreshold" -> s.goGCThreshold();
                case "goMemoryLimitMB" -> s.goMemoryLimitMB();
                default -> s.goMaxProcs();
            };
            if (v != null && v < -1) {
                errors.add(SPEC.field(f), "must be -1 (no limit) or more");
            }
        }
    }

    // ---- helpers --------------------------------------------------------------------------

    private static String sorted(java.util.Collection<String> values) {
        return values.stream().sorted().collect(Collectors.joining(", "));
    }

    private static void port(Integer v, String field, Errors errors) {
        if (v != null && (v < 1 || v > 65535)) {
            errors.add(SPEC.field(field), "must be between 1 and 65535");
        }
    }

    private static void range(Port p, FieldPath path, Errors errors) {
        if (p == null) {
            return;
        }
        if (p.isNamed()) {
            errors.add(path, "must be a port number or range, not a named port");
            return;
        }
        RuleValidator.port(p, path, errors);
    }

    private static void mtu(Integer v, String field, int min, Errors errors) {
        if (v != null && v != 0 && (v < min || v > 65535)) {
            errors.add(SPEC.field(field), "must be 0 (detect) or between " + min + " and 65535");
        }
    }

    private static void ip(String v, int version, String field, Errors errors) {
        if (v != null && !v.isEmpty()) {
            Cidrs.ip(v, version, SPEC.field(field), errors);
        }
    }

    private static void host(String v, String field, Errors errors) {
        if (v != null && !HOST.matcher(v).matches()) {
            errors.add(SPEC.field(field), "must be an IP address or host name of at most 64 characters");
        }
    }

    private static void regex(String v, String field, Errors errors) {
        if (v == null || v.isEmpty()) {
            return;
        }
        try {
            Pattern.compile(v);
        } catch (PatternSyntaxException e) {
            errors.add(SPEC.field(field), "invalid regular expression: " + e.getDescription().toLowerCase(Locale.ROOT));
        }
    }

    private static void nonNegative(Integer v, String field, Errors errors) {
        if (v != null && v < 0) {
            errors.add(SPEC.field(field), "must not be negative");
        }
    }

    private static void positive(Integer v, String field, Errors errors) {
        if (v != null && v < 1) {
            errors.add(SPEC.field(field), "must be at least 1");
        }
    }
}
