package calico.confd.render;

import calico.api.model.ASNumber;
import calico.api.model.BGPFilter;
import calico.api.model.BGPFilterSpec;
import calico.api.model.BGPFilterSpec.FilterRule;
import calico.api.model.BGPFilterSpec.Operation;
import calico.api.net.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a BGPFilter into BIRD functions, one per direction and family
 * ({@code 'bgp_<name>_importFilterV4'}, as Calico names them). The first matching rule decides:
 * each rule is {@code if (<all its matches>) then { <operations>; accept|reject; }}, and a
 * route no rule matches falls through to the peer's default policy.
 */
final class FilterRenderer {

    private FilterRenderer() {
    }

    /** A BIRD function: name and body lines. */
    record Function(String name, List<String> lines) {
    }

    /** {@return the function name for one filter, direction ({@code import}/{@code export}) and family (4/6)} */
    static String functionName(String filter, String direction, int family) {
        return "'bgp_" + filter + "_" + direction + "FilterV" + family + "'";
    }

    /** {@return the four functions of a filter}; rules whose CIDR is of the wrong family are an error */
    static List<Function> render(BGPFilter filter) {
        BGPFilterSpec s = filter.spec() == null
                ? new BGPFilterSpec(null, null, null, null) : filter.spec();
        String name = filter.metadata().name();
        return List.of(
                new Function(functionName(name, "import", 4), rules(s.importV4(), 4, "spec.importV4")),
                new Function(functionName(name, "export", 4), rules(s.exportV4(), 4, "spec.exportV4")),
                new Function(functionName(name, "import", 6), rules(s.importV6(), 6, "spec.importV6")),
                new Function(functionName(name, "export", 6), rules(s.exportV6(), 6, "spec.exportV6")));
    }

    private static List<String> rules(List<FilterRule> rules, int family, String field) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < rules.size(); i++) {
            out.add(rule(rules.get(i), family, field + "[" + i + "]"));
        }
        return out;
    }

    private static String rule(FilterRule r, int family, String field) {
        List<String> conds = new ArrayList<>();
        if (r.cidr() != null && !r.cidr().isEmpty()) {
            Cidr cidr = Cidr.tryParse(r.cidr()).orElseThrow(() ->
                    new IllegalArgumentException(field + ".cidr: \"" + r.cidr() + "\" is not a CIDR"));
            if (cidr.version() != family) {
                throw new IllegalArgumentException(field + ".cidr: " + r.cidr() + " is not IPv" + family);
            }
            conds.add(cidrMatch(cidr, r, family, field));
        }
        if (r.source() == BGPFilterSpec.MatchSource.RemotePeers) {
            conds.add("source = RTS_BGP");
        }
        if (r.iface() != null && !r.iface().isEmpty()) {
            conds.add("ifname ~ \"" + r.iface() + "\"");
        }
        if (r.peerType() != null) {
            conds.add(r.peerType() == BGPFilterSpec.PeerType.eBGP ? "is_ebgp" : "!is_ebgp");
        }
        if (r.communities() != null && !r.communities().values().isEmpty()) {
            List<String> any = new ArrayList<>();
            for (String v : r.communities().values()) {
                any.add(Communities.match(v, field + ".communities"));
            }
            conds.add(any.size() == 1 ? any.get(0) : "(" + String.join(" || ", any) + ")");
        }
        if (!r.asPathPrefix().isEmpty()) {
            StringBuilder p = new StringBuilder("bgp_path ~ [=");
            for (ASNumber as : r.asPathPrefix()) {
                p.append(' ').append(as.value());
            }
            conds.add(p.append(" * =]").toString());
        }
        if (r.priority() != null) {
            conds.add("krt_metric = " + r.priority());
        }
        StringBuilder body = new StringBuilder();
        if (r.action() == BGPFilterSpec.FilterAction.Accept) {
            for (Operation op : r.operations()) {
                body.append(operation(op, field)).append(' ');
            }
        }
        if (r.action() == null) {
            throw new IllegalArgumentException(field + ".action: required (Accept or Reject)");
        }
        body.append(r.action() == BGPFilterSpec.FilterAction.Accept ? "accept;" : "reject;");
        if (conds.isEmpty()) {
            return body.toString();
        }
        return "if (" + String.join(" && ", conds.stream().map(c -> "(" + c + ")").toList()) + ") then { "
                + body + " }";
    }

    private static String cidrMatch(Cidr cidr, FilterRule r, int family, String field) {
        BGPFilterSpec.MatchOperator op = r.matchOperator() == null ? BGPFilterSpec.MatchOperator.In : r.matchOperator();
        String net = cidr.network().toString();
        int max = family == 4 ? 32 : 128;
        String set;
        if (r.prefixLength() != null && (r.prefixLength().min() != null || r.prefixLength().max() != null)) {
            int lo = r.prefixLength().min() == null ? cidr.prefixLength() : r.prefixLength().min();
            int hi = r.prefixLength().max() == null ? max : r.prefixLength().max();
            if (lo > hi || hi > max) {
                throw new IllegalArgumentException(field + ".prefixLength: " + lo + ".." + hi + " is not within "
                        + cidr.prefixLength() + ".." + max);
            }
            set = "[ " + net + "{" + lo + "," + hi + "} ]";
        } else {
            set = "[ " + net + "+ ]";
        }
        return switch (op) {
            case Equal -> "net = " + net;
            case NotEqual -> "net != " + net;
            case In -> "net ~ " + set;
            case NotIn -> "net !~ " + set;
        };
    }

    private static String operation(Operation op, String field) {
        if (op.addCommunity() != null) {
            return Communities.add(op.addCommunity().value(), field + ".operations.addCommunity");
        }
        if (op.prependASPath() != null) {
            StringBuilder b = new StringBuilder();
            List<ASNumber> prefix = op.prependASPath().prefix();
            // prepend() puts one AS in front: go backwards so the path starts with prefix[0].
            for (int i = prefix.size() - 1; i >= 0; i--) {
                b.append("bgp_path.prepend(").append(prefix.get(i).value()).append("); ");
            }
            return b.toString().trim();
        }
        if (op.setPriority() != null) {
            return "krt_metric = " + op.setPriority().value() + ";";
        }
        throw new IllegalArgumentException(field + ".operations: an operation needs one of addCommunity, "
                + "prependASPath, setPriority");
    }
}
