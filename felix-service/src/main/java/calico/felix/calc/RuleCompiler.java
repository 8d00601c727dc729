package calico.felix.calc;

import calico.api.model.Action;
import calico.api.model.EntityRule;
import calico.api.model.Port;
import calico.api.model.Rule;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Compiles v3 rules into {@link CompiledRule}s: a pure function of the rules and the policy's
 * namespace. Every selector-like match (selector, namespaceSelector, serviceAccounts) of one
 * side becomes a single combined selector, hence one IP set; named ports become named-port sets.
 *
 * <p>A {@code services} match becomes a service set ({@link IpSetSpec#service}) of the Service's
 * endpoints, as Calico's: on the destination, (address, protocol, port) members matched like a
 * named port; on the source, addresses only. A service without a namespace takes the policy's.
 * Where the datastore has no Services ({@code servicesPresented} false: etcd) the set stays empty,
 * so the rule matches nothing, and a warning names the rule once.
 *
 * <p>Fail closed: a match this graph cannot express (a bad net or selector, destination services
 * with ports of the rule's own, which validation refuses) drops an Allow/Pass/Log rule entirely,
 * and is ignored on a Deny rule (which then denies more). Either way the policy can only let less
 * through.
 */
final class RuleCompiler {

    /** Past this many, {@link #specs} is emptied (the selectors in use are far fewer). */
    private static final int SPEC_CACHE_LIMIT = 20_000;

    private final OnceLog warnings = new OnceLog(LoggerFactory.getLogger(RuleCompiler.class));
    private final boolean servicesPresented;
    /**
     * Selector and named-port set specs by kind and canonical selector: a catch-up compiles
     * thousands of policies naming the same few hundred selectors, and each ID is a SHA-224.
     * Equal canonical forms match the same labels, so one instance serves them all. The graph's thread.
     */
    private final BoundedMemo<String, IpSetSpec> specs = new BoundedMemo<>(SPEC_CACHE_LIMIT);

    /** @param servicesPresented whether the datastore presents Kubernetes Services and EndpointSlices */
    RuleCompiler(boolean servicesPresented) {
        this.servicesPresented = servicesPresented;
    }

    /** A compiled policy or profile and the IP sets its rules need, by ID. */
    record Result(CompiledPolicy policy, Map<String, IpSetSpec> ipSets) {
        Result {
            ipSets = Map.copyOf(ipSets);
        }
    }

    Result compile(List<Rule> ingress, List<Rule> egress, String namespace, boolean staged, String what) {
        Map<String, IpSetSpec> sets = new LinkedHashMap<>();
        List<CompiledRule> in = compileAll(ingress, namespace, sets, what + " ingress");
        List<CompiledRule> out = compileAll(egress, namespace, sets, what + " egress");
        return new Result(new CompiledPolicy(in, out, staged), sets);
    }

    private List<CompiledRule> compileAll(List<Rule> rules, String ns, Map<String, IpSetSpec> sets, String what) {
        List<CompiledRule> out = new ArrayList<>(rules.size());
        for (int i = 0; i < rules.size(); i++) {
            Rule r = rules.get(i);
            Map<String, IpSetSpec> ruleSets = new LinkedHashMap<>();
            try {
                boolean deny = r.action() == Action.Deny;
                String proto = r.protocol() == null ? null : r.protocol().toString();
                CompiledRule.Side src = side(r.source(), false, ns, proto, deny, ruleSets);
                CompiledRule.Side dst = side(r.destination(), true, ns, proto, deny, ruleSets);
                if (!servicesPresented && (services(r.source()) || services(r.destination()))) {
                    warnings.warn("{} rule {}: its services match matches nothing: this datastore has no "
                            + "Kubernetes Services (only the kubernetes datastore does)", what, i);
                }
                out.add(new CompiledRule(r.action() == null ? Action.Allow : r.action(), r.ipVersion(), proto,
                        r.notProtocol() == null ? null : r.notProtocol().toString(), r.icmp(), r.notICMP(), src, dst,
                        r.http()));
                sets.putAll(ruleSets);
            } catch (Unsupported | IllegalArgumentException e) {
                warnings.warn("{} rule {} dropped (fail closed): {}", what, i, e.getMessage());
            }
        }
        return out;
    }

    /** A match that cannot be programmed. */
    private static final class Unsupported extends RuntimeException {
        Unsupported(String m) {
            super(m, null, false, false);
        }
    }

    private static boolean services(EntityRule e) {
        return e != null && e.services() != null;
    }

    private CompiledRule.Side side(EntityRule e, boolean destination, String ns, String proto, boolean deny,
                                   Map<String, IpSetSpec> sets) {
        if (e == null) {
            return CompiledRule.Side.ANY;
        }
        if (destination && e.services() != null && !deny && (!e.ports().isEmpty() || !e.notPorts().isEmpty())) {
            throw new Unsupported("destination services cannot be combined with ports");
        }
        boolean hasSel = !CalicoLabels.blank(e.selector());
        boolean hasNs = !CalicoLabels.blank(e.namespaceSelector());
        boolean hasSa = e.serviceAccounts() != null
                && (!e.serviceAccounts().names().isEmpty() || !CalicoLabels.blank(e.serviceAccounts().selector()));
        boolean hasNot = !CalicoLabels.blank(e.notSelector());
        // As Calico: the namespace part (the namespaceSelector, or the policy's own namespace)
        // restricts the positive match as soon as any selector-like field is used, notSelector
        // included; the notSelector itself stays as written.
        Selector nsPart = hasNs ? CalicoLabels.namespaceSelector(e.namespaceSelector())
                : ns != null ? CalicoLabels.inNamespace(ns) : null;
        Selector combined = null;
        if (hasSel || hasSa || (nsPart != null && (hasNs || hasNot))) {
            Selector sa = null;
            if (hasSa) {
                sa = CalicoLabels.and(
                        e.serviceAccounts().names().isEmpty() ? null : CalicoLabels.serviceAccountNames(e.serviceAccounts().names()),
                        CalicoLabels.blank(e.serviceAccounts().selector()) ? null
                                : CalicoLabels.serviceAccountSelector(e.serviceAccounts().selector()));
            }
            combined = CalicoLabels.and(nsPart, sa, hasSel ? Selector.parse(e.selector()) : null);
        }
        Selector notCombined = hasNot ? Selector.parse(e.notSelector()) : null;

        List<String> ipSets = new ArrayList<>();
        List<String> notIpSets = new ArrayList<>();
        if (combined != null) {
            ipSets.add(add(sets, selectorSet(combined)));
        }
        if (notCombined != null) {
            notIpSets.add(add(sets, selectorSet(notCombined)));
        }
        List<String> named = new ArrayList<>();
        if (e.services() != null) {
            String svcNs = CalicoLabels.blank(e.services().namespace()) ? ns : e.services().namespace();
            IpSetSpec svc = IpSetSpec.service(svcNs, e.services().name(), destination);
            // The destination's set holds (address, protocol, port): matched as a named port is.
            (destination ? named : ipSets).add(add(sets, svc));
        }
        String portProto = proto == null ? "tcp" : proto.toLowerCase(java.util.Locale.ROOT);
        Selector portSel = combined == null ? Selector.all() : combined;
        List<String> ports = new ArrayList<>();
        for (Port p : e.ports()) {
            if (p.isNamed()) {
                named.add(add(sets, namedPortSet(portSel, portProto, p.name())));
            } else {
                ports.add(p.toString());
            }
        }
        List<String> notPorts = new ArrayList<>();
        List<String> notNamed = new ArrayList<>();
        for (Port p : e.notPorts()) {
            if (p.isNamed()) {
                notNamed.add(add(sets, namedPortSet(Selector.all(), portProto, p.name())));
            } else {
                notPorts.add(p.toString());
            }
        }
        return new CompiledRule.Side(nets(e.nets()), nets(e.notNets()), ports, notPorts, ipSets, notIpSets, named,
                notNamed);
    }

    private IpSetSpec selectorSet(Selector s) {
        return specs.get("s " + s.canonical(), k -> IpSetSpec.selector(s));
    }

    private IpSetSpec namedPortSet(Selector s, String protocol, String portName) {
        return specs.get("n " + protocol + ":" + portName + ":" + s.canonical(), k -> IpSetSpec.namedPort(s, protocol, portName));
    }

    private static String add(Map<String, IpSetSpec> sets, IpSetSpec s) {
        sets.putIfAbsent(s.id(), s);
        return s.id();
    }

    private static List<String> nets(List<String> nets) {
        List<String> out = new ArrayList<>(nets.size());
        for (String n : nets) {
            out.add(Cidr.parseCidrOrIp(n).network().toString());
        }
        return out;
    }
}
