package calico.api.validation;

import calico.api.model.ASNumber;
import calico.api.model.BGPConfiguration;
import calico.api.model.BGPConfigurationSpec;
import calico.api.model.BGPFilter;
import calico.api.model.BGPFilterSpec.FilterRule;
import calico.api.model.BGPFilterSpec;
import calico.api.model.BGPPassword;
import calico.api.model.BGPPeer;
import calico.api.model.BGPPeerSpec;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Checks BGP peers, the BGP configuration and BGP filters. */
final class BgpValidator {

    static final Set<String> LOG_LEVELS = Set.copyOf(calico.api.model.FelixConfigurationEnums.LOG_SEVERITIES);

    private static final Pattern IPV4_PORT = Pattern.compile("(\\d+)\\.(\\d+)\\.(\\d+)\\.(\\d+):(\\d+)");
    private static final Pattern IPV6_PORT = Pattern.compile("\\[([0-9a-fA-F:.]+)]:(\\d+)");
    private static final Pattern IGNORED_INTERFACE = Pattern.compile("[a-zA-Z0-9_.*-]{1,15}");
    private static final Pattern FILTER_INTERFACE = Pattern.compile("[a-zA-Z0-9_.*-]{1,15}");
    private static final FieldPath SPEC = FieldPath.of("spec");

    private BgpValidator() {
    }

    /** AS numbers are 1-4294967295 (plain or dotted {@code x.y}); 0 is not an AS. */
    static void asNumber(ASNumber as, FieldPath path, Errors errors) {
        if (as != null && as.value() == 0) {
            errors.add(path, "AS number must be between 1 and 4294967295 (or x.y)");
        }
    }

    // ---- BGPPeer ----------------------------------------------------------------------

    static void validate(BGPPeer peer, Errors errors) {
        MetadataValidator.validate(peer.metadata(), peer.resourceKind(), true, errors);
        BGPPeerSpec s = peer.spec();
        if (s == null) {
            return;
        }
        boolean node = notEmpty(s.node());
        boolean nodeSelector = notEmpty(s.nodeSelector());
        boolean peerIP = notEmpty(s.peerIP());
        boolean peerSelector = notEmpty(s.peerSelector());
        boolean workloads = notEmpty(s.localWorkloadSelector());
        if (node && nodeSelector) {
            errors.add(SPEC.field("node"), "must be empty when nodeSelector is set");
        }
        if (peerIP && peerSelector) {
            errors.add(SPEC.field("peerIP"), "must be empty when peerSelector is set");
        }
        if (s.asNumber() != null && peerSelector) {
            errors.add(SPEC.field("asNumber"), "must be empty when peerSelector is set (the peers' own AS numbers apply)");
        }
        if (workloads) {
            if (s.asNumber() == null) {
                errors.add(SPEC.field("asNumber"), "is required when localWorkloadSelector is set");
            }
            if (peerIP) {
                errors.add(SPEC.field("peerIP"), "must be empty when localWorkloadSelector is set");
            }
            if (peerSelector) {
                errors.add(SPEC.field("peerSelector"), "must be empty when localWorkloadSelector is set");
            }
        }
        if (Boolean.TRUE.equals(s.keepOriginalNextHop()) && s.nextHopMode() != null) {
            errors.add(SPEC.field("keepOriginalNextHop"), "is deprecated and must not be true when nextHopMode is set");
        }
        if (node && Names.dnsSubdomain(s.node()) != null) {
            errors.add(SPEC.field("node"), Names.dnsSubdomain(s.node()));
        }
        Selectors.checkNoGlobal(s.nodeSelector(), SPEC.field("nodeSelector"), errors);
        Selectors.checkNoGlobal(s.peerSelector(), SPEC.field("peerSelector"), errors);
        Selectors.checkNoGlobal(s.localWorkloadSelector(), SPEC.field("localWorkloadSelector"), errors);
        asNumber(s.asNumber(), SPEC.field("asNumber"), errors);
        asNumber(s.localASNumber(), SPEC.field("localASNumber"), errors);
        Optional<IpAddress> peerAddress = peerIP ? peerIp(s.peerIP(), SPEC.field("peerIP"), errors) : Optional.empty();
        if (notEmpty(s.reachableBy())) {
            if (!peerIP) {
                errors.add(SPEC.field("reachableBy"), "requires peerIP");
            }
            Optional<IpAddress> gw = Cidrs.ip(s.reachableBy(), 0, SPEC.field("reachableBy"), errors);
            if (gw.isPresent() && peerAddress.isPresent() && gw.get().version() != peerAddress.get().version()) {
                errors.add(SPEC.field("reachableBy"), "must be the same IP version as peerIP");
            }
        }
        Durations.checkNonNegative(s.maxRestartTime(), SPEC.field("maxRestartTime"), errors);
        if (s.ttlSecurity() != null && (s.ttlSecurity() < 0 || s.ttlSecurity() > 255)) {
            errors.add(SPEC.field("ttlSecurity"), "must be between 0 and 255");
        }
        if (s.numAllowedLocalASNumbers() != null && s.numAllowedLocalASNumbers() < 0) {
            errors.add(SPEC.field("numAllowedLocalASNumbers"), "must not be negative");
        }
        password(s.password(), SPEC.field("password"), errors);
        for (int i = 0; i < s.filters().size(); i++) {
            String bad = Names.dnsSubdomain(s.filters().get(i));
            if (bad != null) {
                errors.add(SPEC.field("filters").index(i), bad);
            }
        }
    }

    /**
     * A peer address: {@code <ip>}, {@code <ipv4>:<port>} or {@code [<ipv6>]:<port>}, port 1-65535.
     * {@return the address when valid}
     */
    static Optional<IpAddress> peerIp(String value, FieldPath path, Errors errors) {
        String host = value;
        Matcher v4 = IPV4_PORT.matcher(value);
        Matcher v6 = IPV6_PORT.matcher(value);
        String port = null;
        if (v4.matches()) {
            host = value.substring(0, value.lastIndexOf(':'));
            port = v4.group(5);
        } else if (v6.matches()) {
            host = v6.group(1);
            port = v6.group(2);
        }
        if (port != null && (port.length() > 5 || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535)) {
            errors.add(path, "invalid port in \"" + value + "\": must be between 1 and 65535");
            return Optional.empty();
        }
        Optional<IpAddress> ip = IpAddress.tryParse(host);
        if (ip.isEmpty()) {
            errors.add(path, "invalid peer address \"" + value + "\": use <IP>, <IPv4>:<port> or [<IPv6>]:<port>");
        }
        return ip;
    }

    private static void password(BGPPassword p, FieldPath path, Errors errors) {
        if (p == null) {
            return;
        }
        if (p.secretKeyRef() == null) {
            errors.add(path.field("secretKeyRef"), "is required");
            return;
        }
        if (!notEmpty(p.secretKeyRef().name())) {
            errors.add(path.field("secretKeyRef").field("name"), "is required");
        }
        if (!notEmpty(p.secretKeyRef().key())) {
            errors.add(path.field("secretKeyRef").field("key"), "is required");
        }
    }

    // ---- BGPConfiguration -------------------------------------------------------------

    static void validate(BGPConfiguration config, Errors errors) {
        MetadataValidator.validate(config.metadata(), config.resourceKind(), true, errors);
        BGPConfigurationSpec s = config.spec();
        if (s == null) {
            return;
        }
        if (s.logSeverityScreen() != null && !LOG_LEVELS.contains(s.logSeverityScreen())) {
            errors.add(SPEC.field("logSeverityScreen"), "must be one of Trace, Debug, Info, Warning, Error, Fatal");
        }
        asNumber(s.asNumber(), SPEC.field("asNumber"), errors);
        if (s.listenPort() != null && (s.listenPort() < 1 || s.listenPort() > 65535)) {
            errors.add(SPEC.field("listenPort"), "must be between 1 and 65535");
        }
        cidrBlocks(s.serviceClusterIPs(), "serviceClusterIPs", errors);
        cidrBlocks(s.serviceExternalIPs(), "serviceExternalIPs", errors);
        cidrBlocks(s.serviceLoadBalancerIPs(), "serviceLoadBalancerIPs", errors);
        for (int i = 0; i < s.communities().size(); i++) {
            BGPConfigurationSpec.Community c = s.communities().get(i);
            FieldPath cp = SPEC.field("communities").index(i);
            if (!notEmpty(c.name())) {
                errors.add(cp.field("name"), "is required");
            }
            String bad = Communities.check(c.value());
            if (bad != null) {
                errors.add(cp.field("value"), bad);
            }
        }
        if (!s.communities().isEmpty() && s.prefixAdvertisements().isEmpty()) {
            errors.add(SPEC.field("communities"), "communities are defined but no prefixAdvertisements use them");
        }
        Set<String> defined = s.communities().stream().map(BGPConfigurationSpec.Community::name)
                .collect(Collectors.toSet());
        for (int i = 0; i < s.prefixAdvertisements().size(); i++) {
            BGPConfigurationSpec.PrefixAdvertisement pa = s.prefixAdvertisements().get(i);
            FieldPath pp = SPEC.field("prefixAdvertisements").index(i);
            if (Cidr.tryParseCidrOrIp(pa.cidr()).isEmpty()) {
                errors.add(pp.field("cidr"), "invalid CIDR \"" + pa.cidr() + "\"");
            }
            for (int j = 0; j < pa.communities().size(); j++) {
                String v = pa.communities().get(j);
                if (Communities.looksLikeCommunity(v)) {
                    String bad = Communities.check(v);
                    if (bad != null) {
                        errors.add(pp.field("communities").index(j), bad);
                    }
                } else if (!defined.contains(v)) {
                    errors.add(pp.field("communities").index(j), "\"" + v + "\" is neither a community value (aa:nn"
                            + " or aa:nn:mm) nor the name of one in spec.communities");
                }
            }
        }
        boolean meshDisabled = Boolean.FALSE.equals(s.nodeToNodeMeshEnabled());
        if (s.nodeMeshPassword() != null && meshDisabled) {
            errors.add(SPEC.field("nodeMeshPassword"), "cannot be set when nodeToNodeMeshEnabled is false");
        }
        if (s.nodeMeshMaxRestartTime() != null && meshDisabled) {
            errors.add(SPEC.field("nodeMeshMaxRestartTime"), "cannot be set when nodeToNodeMeshEnabled is false");
        }
        password(s.nodeMeshPassword(), SPEC.field("nodeMeshPassword"), errors);
        Durations.checkNonNegative(s.nodeMeshMaxRestartTime(), SPEC.field("nodeMeshMaxRestartTime"), errors);
        for (int i = 0; i < s.ignoredInterfaces().size(); i++) {
            String iface = s.ignoredInterfaces().get(i);
            if (iface == null || iface.equals("*") || !IGNORED_INTERFACE.matcher(iface).matches()) {
                errors.add(SPEC.field("ignoredInterfaces").index(i),
                        "must be 1-15 characters of letters, digits, '_', '.', '-' or '*' wildcards (not just '*')");
            }
        }
        if (notEmpty(s.localWorkloadPeeringIPV4())) {
            Cidrs.ip(s.localWorkloadPeeringIPV4(), 4, SPEC.field("localWorkloadPeeringIPV4"), errors);
        }
        if (notEmpty(s.localWorkloadPeeringIPV6())) {
            Cidrs.ip(s.localWorkloadPeeringIPV6(), 6, SPEC.field("localWorkloadPeeringIPV6"), errors);
        }
        if (s.serviceLoadBalancerAggregation() != null
                && !Set.of("Enabled", "Disabled").contains(s.serviceLoadBalancerAggregation())) {
            errors.add(SPEC.field("serviceLoadBalancerAggregation"), "must be Enabled or Disabled");
        }
    }

    private static void cidrBlocks(List<BGPConfigurationSpec.CidrBlock> blocks, String field, Errors errors) {
        for (int i = 0; i < blocks.size(); i++) {
            String cidr = blocks.get(i) == null ? null : blocks.get(i).cidr();
            if (Cidr.tryParseCidrOrIp(cidr).isEmpty()) {
                errors.add(SPEC.field(field).index(i).field("cidr"), "invalid CIDR \"" + cidr + "\"");
            }
        }
    }

    // ---- BGPFilter --------------------------------------------------------------------

    static void validate(BGPFilter filter, Errors errors) {
        MetadataValidator.validate(filter.metadata(), filter.resourceKind(), true, errors);
        BGPFilterSpec s = filter.spec();
        if (s == null) {
            return;
        }
        filterRules(s.exportV4(), 4, SPEC.field("exportV4"), errors);
        filterRules(s.importV4(), 4, SPEC.field("importV4"), errors);
        filterRules(s.exportV6(), 6, SPEC.field("exportV6"), errors);
        filterRules(s.importV6(), 6, SPEC.field("importV6"), errors);
    }

    private static void filterRules(List<FilterRule> rules, int version, FieldPath path, Errors errors) {
        for (int i = 0; i < rules.size(); i++) {
            filterRule(rules.get(i), version, path.index(i), errors);
        }
    }

    private static void filterRule(FilterRule r, int version, FieldPath path, Errors errors) {
        if (r == null) {
            errors.add(path, "must not be null");
            return;
        }
        if (r.action() == null) {
            errors.add(path.field("action"), "is required: Accept or Reject");
        }
        boolean hasCidr = notEmpty(r.cidr());
        if (hasCidr) {
            Optional<Cidr> c = Cidr.tryParse(r.cidr());
            if (c.isEmpty() || c.get().version() != version) {
                errors.add(path.field("cidr"), "must be an IPv" + version + " CIDR");
            } else if (!c.get().isStrictlyMasked()) {
                errors.add(path.field("cidr"), "CIDR \"" + r.cidr() + "\" has host bits set: use " + c.get().network());
            }
            if (r.matchOperator() == null) {
                errors.add(path.field("matchOperator"), "is required when cidr is set: Equal, NotEqual, In or NotIn");
            }
        } else {
            if (r.matchOperator() != null) {
                errors.add(path.field("matchOperator"), "requires cidr");
            }
            if (r.prefixLength() != null) {
                errors.add(path.field("prefixLength"), "requires cidr");
            }
        }
        if (r.prefixLength() != null) {
            int max = version == 4 ? 32 : 128;
            Integer lo = r.prefixLength().min();
            Integer hi = r.prefixLength().max();
            if (lo != null && (lo < 0 || lo > max)) {
                errors.add(path.field("prefixLength").field("min"), "must be between 0 and " + max);
            }
            if (hi != null && (hi < 0 || hi > max)) {
                errors.add(path.field("prefixLength").field("max"), "must be between 0 and " + max);
            }
            if (lo != null && hi != null && lo > hi) {
                errors.add(path.field("prefixLength"), "min must not exceed max");
            }
        }
        if (r.iface() != null && !FILTER_INTERFACE.matcher(r.iface()).matches()) {
            errors.add(path.field("interface"), "must be 1-15 characters of letters, digits, '_', '.', '-' or '*'");
        }
        if (r.communities() != null) {
            for (int i = 0; i < r.communities().values().size(); i++) {
                String bad = Communities.check(r.communities().values().get(i));
                if (bad != null) {
                    errors.add(path.field("communities").field("values").index(i), bad);
                }
            }
        }
        for (int i = 0; i < r.asPathPrefix().size(); i++) {
            asNumber(r.asPathPrefix().get(i), path.field("asPathPrefix").index(i), errors);
        }
        if (r.priority() != null && r.priority() < 1) {
            errors.add(path.field("priority"), "must be at least 1");
        }
        for (int i = 0; i < r.operations().size(); i++) {
            operation(r.operations().get(i), path.field("operations").index(i), errors);
        }
    }

    private static void operation(BGPFilterSpec.Operation op, FieldPath path, Errors errors) {
        int set = (op.addCommunity() != null ? 1 : 0) + (op.prependASPath() != null ? 1 : 0)
                + (op.setPriority() != null ? 1 : 0);
        if (set != 1) {
            errors.add(path, "set exactly one of addCommunity, prependASPath or setPriority");
            return;
        }
        if (op.addCommunity() != null) {
            String bad = Communities.check(op.addCommunity().value());
            if (bad != null) {
                errors.add(path.field("addCommunity").field("value"), bad);
            }
        } else if (op.prependASPath() != null) {
            if (op.prependASPath().prefix().isEmpty()) {
                errors.add(path.field("prependASPath").field("prefix"), "must list at least one AS number");
            }
            for (int i = 0; i < op.prependASPath().prefix().size(); i++) {
                asNumber(op.prependASPath().prefix().get(i), path.field("prependASPath").field("prefix").index(i), errors);
            }
        } else if (op.setPriority().value() == null || op.setPriority().value() < 1) {
            errors.add(path.field("setPriority").field("value"), "must be at least 1");
        }
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }
}
