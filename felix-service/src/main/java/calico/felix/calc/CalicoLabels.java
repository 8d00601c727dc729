package calico.felix.calc;

import calico.api.selector.Expr;
import calico.api.selector.Selector;
import java.util.ArrayList;
import java.util.List;

/**
 * Calico's label conventions and the selector rewrites that rely on them: endpoints carry their
 * namespace and service account as labels, and inherit the namespace's and service account's
 * labels under the {@code pcns.} and {@code pcsa.} prefixes from their {@code kns.}/{@code ksa.}
 * profiles, so namespace and service-account selectors become plain selectors.
 */
final class CalicoLabels {

    static final String NAMESPACE = "projectcalico.org/namespace";
    static final String ORCHESTRATOR = "projectcalico.org/orchestrator";
    static final String SERVICE_ACCOUNT = "projectcalico.org/serviceaccount";
    static final String NAMESPACE_PREFIX = "pcns.";
    static final String SERVICE_ACCOUNT_PREFIX = "pcsa.";
    static final String NAMESPACE_PROFILE_PREFIX = "kns.";

    private CalicoLabels() {
    }

    static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    /**
     * {@return a namespaceSelector as a selector over endpoint labels}: {@code all()} means
     * every namespaced endpoint, {@code global()} every non-namespaced one; anything else tests
     * the namespace's labels under {@code pcns.}.
     */
    static Selector namespaceSelector(String text) {
        Selector s = Selector.parse(text.trim());
        if (s.root() instanceof Expr.All) {
            return Selector.of(new Expr.Has(NAMESPACE));
        }
        if (s.root() instanceof Expr.Global) {
            return Selector.of(new Expr.Not(new Expr.Has(NAMESPACE)));
        }
        return Selector.of(prefix(s.root(), NAMESPACE_PREFIX, true));
    }

    /** {@return a serviceAccountSelector as a selector over endpoint labels} ({@code pcsa.} prefix). */
    static Selector serviceAccountSelector(String text) {
        Selector s = Selector.parse(text.trim());
        return s.root() instanceof Expr.All ? s : Selector.of(prefix(s.root(), SERVICE_ACCOUNT_PREFIX, false));
    }

    static Selector inNamespace(String namespace) {
        return Selector.of(new Expr.Equals(NAMESPACE, namespace));
    }

    static Selector serviceAccountNames(List<String> names) {
        return Selector.of(names.size() == 1 ? new Expr.Equals(SERVICE_ACCOUNT, names.get(0))
                : new Expr.In(SERVICE_ACCOUNT, names));
    }

    /** {@return the conjunction}; {@code null} and {@code all()} parts are left out. */
    static Selector and(Selector... parts) {
        List<Expr> ops = new ArrayList<>();
        for (Selector p : parts) {
            if (p != null && !(p.root() instanceof Expr.All)) {
                ops.add(p.root());
            }
        }
        if (ops.isEmpty()) {
            return Selector.all();
        }
        return ops.size() == 1 ? Selector.of(ops.get(0)) : Selector.of(new Expr.And(ops));
    }

    /**
     * Prefixes every label key; in a namespace selector ({@code ns == true}) a nested
     * {@code all()} means "namespaced" and {@code global()} "not namespaced", as Calico rewrites them.
     */
    static Expr prefix(Expr e, String p, boolean ns) {
        if (e instanceof Expr.Has x) {
            return new Expr.Has(p + x.label());
        } else if (e instanceof Expr.Equals x) {
            return new Expr.Equals(p + x.label(), x.value());
        } else if (e instanceof Expr.NotEquals x) {
            return new Expr.NotEquals(p + x.label(), x.value());
        } else if (e instanceof Expr.Contains x) {
            return new Expr.Contains(p + x.label(), x.value());
        } else if (e instanceof Expr.StartsWith x) {
            return new Expr.StartsWith(p + x.label(), x.value());
        } else if (e instanceof Expr.EndsWith x) {
            return new Expr.EndsWith(p + x.label(), x.value());
        } else if (e instanceof Expr.In x) {
            return new Expr.In(p + x.label(), x.values());
        } else if (e instanceof Expr.NotIn x) {
            return new Expr.NotIn(p + x.label(), x.values());
        } else if (e instanceof Expr.Not x) {
            return Expr.not(prefix(x.operand(), p, ns));
        } else if (e instanceof Expr.And x) {
            return new Expr.And(x.operands().stream().map(o -> prefix(o, p, ns)).toList());
        } else if (e instanceof Expr.Or x) {
            return new Expr.Or(x.operands().stream().map(o -> prefix(o, p, ns)).toList());
        } else if (e instanceof Expr.All) {
            return ns ? new Expr.Has(NAMESPACE) : e;
        } else if (e instanceof Expr.Global) {
            return ns ? new Expr.Not(new Expr.Has(NAMESPACE)) : e;
        }
        throw new IllegalArgumentException("unknown selector node " + e);
    }
}
