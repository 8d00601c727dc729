package calico.api.validation;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.Rule;
import calico.api.net.Cidr;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks one policy or profile rule on its own. Checks that depend on where the rule sits
 * (ingress or egress, global or namespaced policy) are {@link PolicyValidator}'s.
 */
final class RuleValidator {

    /** Protocol names as Calico's v3 API spells them; matching is case-sensitive, as in Calico. */
    static final Set<String> PROTOCOL_NAMES = Set.of("TCP", "UDP", "ICMP", "ICMPv6", "SCTP", "UDPLite");

    static final String PORTS_NEED_PROTOCOL = "rules that specify ports must set protocol to TCP, UDP or SCTP";

    private static final int ICMP = 1;
    private static final int ICMPV6 = 58;
    private static final int TCP = 6;

    private RuleValidator() {
    }

    static void validate(Rule rule, FieldPath path, Errors errors) {
        if (rule == null) {
            errors.add(path, "must not be null");
            return;
        }
        if (rule.action() == null) {
            errors.add(path.field("action"), "is required: one of Allow, Deny, Log, Pass");
        }
        Integer ipVersion = rule.ipVersion();
        if (ipVersion != null && ipVersion != 4 && ipVersion != 6) {
            errors.add(path.field("ipVersion"), "must be 4 or 6");
            ipVersion = null;
        }
        protocol(rule.protocol(), path.field("protocol"), errors);
        protocol(rule.notProtocol(), path.field("notProtocol"), errors);
        icmp(rule.icmp(), rule.protocol(), path.field("icmp"), errors);
        icmp(rule.notICMP(), rule.protocol(), path.field("notICMP"), errors);
        if (ipVersion != null) {
            if ((isProtocol(rule.protocol(), ICMP) || isProtocol(rule.notProtocol(), ICMP)) && ipVersion != 4) {
                errors.add(path.field("ipVersion"), "must be 4 with protocol ICMP");
            }
            if ((isProtocol(rule.protocol(), ICMPV6) || isProtocol(rule.notProtocol(), ICMPV6)) && ipVersion != 6) {
                errors.add(path.field("ipVersion"), "must be 6 with protocol ICMPv6");
            }
        }
        boolean portsAllowed = rule.protocol() != null && isKnown(rule.protocol()) && rule.protocol().supportsPorts();
        entity(rule.source(), path.field("source"), portsAllowed, errors);
        entity(rule.destination(), path.field("destination"), portsAllowed, errors);
        nets(rule, ipVersion, path, errors);
        http(rule, path, errors);
        if (rule.metadata() != null) {
            MetadataValidator.annotations(rule.metadata().annotations(), path.field("metadata").field("annotations"),
                    errors);
        }
    }

    /** A protocol is a known name (exact case) or a number 1-255. */
    static void protocol(Protocol p, FieldPath path, Errors errors) {
        if (p == null) {
            return;
        }
        if (p.number() != null) {
            if (p.number() < 1 || p.number() > 255) {
                errors.add(path, "protocol number must be between 1 and 255");
            }
        } else if (!PROTOCOL_NAMES.contains(p.name())) {
            errors.add(path, "unknown protocol \"" + p.name() + "\": use one of TCP, UDP, ICMP, ICMPv6, SCTP, UDPLite"
                    + " or a number 1-255");
        }
    }

    /** A single port, range or named port. Port numbers are 1-65535 (0 is not a port Calico matches). */
    static void port(Port p, FieldPath path, Errors errors) {
        if (p == null) {
            errors.add(path, "must not be null");
            return;
        }
        if (p.isNamed()) {
            String bad = Names.portName(p.name());
            if (bad != null) {
                errors.add(path, bad);
            }
            return;
        }
        if (!inPortRange(p.minPort()) || !inPortRange(p.maxPort())) {
            errors.add(path, "port " + p + " out of range: ports must be between 1 and 65535");
        } else if (p.minPort() > p.maxPort()) {
            errors.add(path, "port range " + p + " is reversed: min must not exceed max");
        }
    }

    private static boolean inPortRange(int port) {
        return port >= 1 && port <= 65535;
    }

    private static void icmp(Rule.IcmpFields icmp, Protocol protocol, FieldPath path, Errors errors) {
        if (icmp == null) {
            return;
        }
        if (icmp.type() != null && (icmp.type() < 0 || icmp.type() > 254)) {
            errors.add(path.field("type"), "ICMP type must be between 0 and 254");
        }
        if (icmp.code() != null) {
            if (icmp.code() < 0 || icmp.code() > 255) {
                errors.add(path.field("code"), "ICMP code must be between 0 and 255");
            }
            if (icmp.type() == null) {
                errors.add(path.field("code"), "ICMP code requires an ICMP type");
            }
        }
        if (!isProtocol(protocol, ICMP) && !isProtocol(protocol, ICMPV6)) {
            errors.add(path, "rules that specify ICMP fields must set protocol to ICMP or ICMPv6");
        }
    }

    private static void entity(EntityRule e, FieldPath path, boolean portsAllowed, Errors errors) {
        if (e == null) {
            return;
        }
        Selectors.checkNoGlobal(e.selector(), path.field("selector"), errors);
        Selectors.checkNoGlobal(e.notSelector(), path.field("notSelector"), errors);
        Selectors.checkNamespaceSelector(e.namespaceSelector(), path.field("namespaceSelector"), errors);
        ports(e.ports(), path.field("ports"), portsAllowed, errors);
        ports(e.notPorts(), path.field("notPorts"), portsAllowed, errors);
        if (e.serviceAccounts() != null) {
            FieldPath sa = path.field("serviceAccounts");
            Selectors.checkNoGlobal(e.serviceAccounts().selector(), sa.field("selector"), errors);
            List<String> names = e.serviceAccounts().names();
            for (int i = 0; i < names.size(); i++) {
                if (names.get(i) == null || names.get(i).isEmpty()) {
                    errors.add(sa.field("names").index(i), "must not be empty");
                }
            }
        }
        if (e.services() != null) {
            FieldPath svc = path.field("services");
            if (e.services().name() == null || e.services().name().isEmpty()) {
                errors.add(svc.field("name"), "is required");
            }
            if (e.namespaceSelector() != null && !e.namespaceSelector().isEmpty()) {
                errors.add(svc, "cannot be combined with namespaceSelector");
            }
            if (notEmpty(e.selector()) || notEmpty(e.notSelector())) {
                errors.add(svc, "cannot be combined with selector or notSelector");
            }
            if (e.serviceAccounts() != null) {
                errors.add(svc, "cannot be combined with serviceAccounts");
            }
            if (!e.nets().isEmpty() || !e.notNets().isEmpty()) {
                errors.add(svc, "cannot be combined with nets or notNets (the service's endpoints supply the IPs)");
            }
        }
    }

    private static void ports(List<Port> ports, FieldPath path, boolean portsAllowed, Errors errors) {
        if (ports.isEmpty()) {
            return;
        }
        if (!portsAllowed) {
            errors.add(path, PORTS_NEED_PROTOCOL);
        }
        for (int i = 0; i < ports.size(); i++) {
            port(ports.get(i), path.index(i), errors);
        }
    }

    /**
     * Rule nets must be strictly masked CIDRs (as Calico requires), and all of them, together
     * with {@code ipVersion}, must agree on one IP version.
     */
    private static void nets(Rule rule, Integer ipVersion, FieldPath path, Errors errors) {
        int seen = ipVersion == null ? 0 : ipVersion;
        String seenAt = ipVersion == null ? null : "ipVersion";
        for (String side : List.of("source", "destination")) {
            EntityRule e = side.equals("source") ? rule.source() : rule.destination();
            if (e == null) {
                continue;
            }
            for (String field : List.of("nets", "notNets")) {
                List<String> nets = field.equals("nets") ? e.nets() : e.notNets();
                FieldPath fp = path.field(side).field(field);
                for (int i = 0; i < nets.size(); i++) {
                    String n = nets.get(i);
                    var cidr = Cidr.tryParse(n);
                    if (cidr.isEmpty()) {
                        errors.add(fp.index(i), "invalid CIDR \"" + n + "\": expected <address>/<prefix length>");
                        continue;
                    }
                    if (!cidr.get().isStrictlyMasked()) {
                        errors.add(fp.index(i), "CIDR \"" + n + "\" has host bits set: use " + cidr.get().network());
                    }
                    int v = cidr.get().version();
                    if (seen == 0) {
                        seen = v;
                        seenAt = side + "." + field + "[" + i + "]";
                    } else if (v != seen) {
                        errors.add(fp.index(i), "IPv" + v + " CIDR conflicts with IPv" + seen + " set by " + seenAt
                                + ": a rule matches one IP version only");
                    }
                }
            }
        }
    }

    private static void http(Rule rule, FieldPath path, Errors errors) {
        Rule.HttpMatch http = rule.http();
        if (http == null) {
            return;
        }
        FieldPath hp = path.field("http");
        if (rule.action() != null && rule.action() != Action.Allow) {
            errors.add(hp, "HTTP match is only valid for Allow rules");
        }
        if (rule.protocol() != null && !isProtocol(rule.protocol(), TCP)) {
            errors.add(path.field("protocol"), "rules that specify HTTP fields must set protocol to TCP or leave it empty");
        }
        Set<String> seenMethods = new HashSet<>();
        for (int i = 0; i < http.methods().size(); i++) {
            String m = http.methods().get(i);
            if (m == null || m.isEmpty()) {
                errors.add(hp.field("methods").index(i), "must not be empty");
            } else if (!seenMethods.add(m)) {
                errors.add(hp.field("methods").index(i), "duplicate method \"" + m + "\"");
            }
        }
        for (int i = 0; i < http.paths().size(); i++) {
            Rule.HttpPath p = http.paths().get(i);
            FieldPath pp = hp.field("paths").index(i);
            if (p == null) {
                errors.add(pp, "must not be null");
                continue;
            }
            boolean exact = notEmpty(p.exact());
            boolean prefix = notEmpty(p.prefix());
            if (exact == prefix) {
                errors.add(pp, exact ? "set exactly one of exact or prefix, not both" : "set exactly one of exact or prefix");
                continue;
            }
            String v = exact ? p.exact() : p.prefix();
            if (!v.startsWith("/") || v.indexOf('?') >= 0 || v.indexOf('#') >= 0 || v.indexOf(' ') >= 0) {
                errors.add(pp.field(exact ? "exact" : "prefix"),
                        "invalid path \"" + v + "\": must start with '/' and not contain '?', '#' or spaces");
            }
        }
    }

    private static boolean isKnown(Protocol p) {
        return p.number() != null ? p.number() >= 1 && p.number() <= 255 : PROTOCOL_NAMES.contains(p.name());
    }

    /** Compares by protocol number, so that {@code ICMP} and {@code 1} mean the same. */
    private static boolean isProtocol(Protocol p, int number) {
        return p != null && isKnown(p) && p.toNumber() == number;
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    /** {@return whether the rule uses application-layer (HTTP) matching} */
    static boolean usesHttp(Rule rule) {
        return rule != null && rule.http() != null;
    }
}
