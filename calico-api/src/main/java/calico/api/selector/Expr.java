package calico.api.selector;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The syntax tree of a selector: a closed set of record variants, one per construct of
 * Calico's selector language.
 *
 * <p>Invariants, enforced by the record constructors so that every tree that can be built
 * renders to text that parses back to an equal tree:
 * <ul>
 *   <li>label keys are non-empty, at most {@value #MAX_LABEL_KEY_LENGTH} characters, and use
 *       only {@code [A-Za-z0-9_./-]};
 *   <li>a value does not contain both quote characters (the language has no escapes);
 *   <li>set values are sorted by code point (Go's byte order) and de-duplicated;
 *   <li>{@link Not} never wraps a {@link Not} (the parser cancels pairs of {@code !});
 *   <li>{@link And} and {@link Or} have at least two operands.
 * </ul>
 *
 * <p>Evaluation does one map lookup per label test and allocates nothing.
 */
public sealed interface Expr {

    /** The longest label key Calico's selector tokenizer reads ({@code [a-zA-Z0-9_./-]{1,512}}). */
    int MAX_LABEL_KEY_LENGTH = 512;

    /** {@return whether the labels satisfy this expression}; a {@code null} value counts as absent. */
    boolean matches(Map<String, String> labels);

    /** Appends this expression in canonical form (Calico's {@code String()} of the AST). */
    void appendCanonical(StringBuilder out);

    /** Adds every label key this expression tests to {@code keys}. */
    void collectLabelKeys(Set<String> keys);

    /** {@return {@code !operand}, cancelling a double negation} */
    static Expr not(Expr operand) {
        return operand instanceof Not n ? n.operand() : new Not(operand);
    }

    /** {@code all()}: matches everything. */
    record All() implements Expr {
        public boolean matches(Map<String, String> labels) {
            return true;
        }

        public void appendCanonical(StringBuilder out) {
            out.append("all()");
        }

        public void collectLabelKeys(Set<String> keys) {
        }
    }

    /**
     * {@code global()}: like Calico's parser it matches every label set. Its meaning (only
     * non-namespaced endpoints) comes from where it is used: Calico rewrites a rule's
     * {@code namespaceSelector: global()} to {@code !has(projectcalico.org/namespace)}.
     */
    record Global() implements Expr {
        public boolean matches(Map<String, String> labels) {
            return true;
        }

        public void appendCanonical(StringBuilder out) {
            out.append("global()");
        }

        public void collectLabelKeys(Set<String> keys) {
        }
    }

    /** {@code has(label)}. */
    record Has(String label) implements Expr {
        public Has {
            label = checkLabel(label);
        }

        public boolean matches(Map<String, String> labels) {
            return labels.get(label) != null;
        }

        public void appendCanonical(StringBuilder out) {
            out.append("has(").append(label).append(')');
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label == "value"}: false when the label is absent. */
    record Equals(String label, String value) implements Expr {
        public Equals {
            label = checkLabel(label);
            checkValue(value);
        }

        public boolean matches(Map<String, String> labels) {
            return value.equals(labels.get(label));
        }

        public void appendCanonical(StringBuilder out) {
            appendComparison(out, label, " == ", value);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label != "value"}: true when the label is absent (Calico semantics). */
    record NotEquals(String label, String value) implements Expr {
        public NotEquals {
            label = checkLabel(label);
            checkValue(value);
        }

        public boolean matches(Map<String, String> labels) {
            return !value.equals(labels.get(label));
        }

        public void appendCanonical(StringBuilder out) {
            appendComparison(out, label, " != ", value);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label contains "value"}: false when the label is absent. */
    record Contains(String label, String value) implements Expr {
        public Contains {
            label = checkLabel(label);
            checkValue(value);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(label);
            return v != null && v.contains(value);
        }

        public void appendCanonical(StringBuilder out) {
            appendComparison(out, label, " contains ", value);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label starts with "value"}: false when the label is absent. */
    record StartsWith(String label, String value) implements Expr {
        public StartsWith {
            label = checkLabel(label);
            checkValue(value);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(label);
            return v != null && v.startsWith(value);
        }

        public void appendCanonical(StringBuilder out) {
            appendComparison(out, label, " starts with ", value);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label ends with "value"}: false when the label is absent. */
    record EndsWith(String label, String value) implements Expr {
        public EndsWith {
            label = checkLabel(label);
            checkValue(value);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(label);
            return v != null && v.endsWith(value);
        }

        public void appendCanonical(StringBuilder out) {
            appendComparison(out, label, " ends with ", value);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label in {...}}: false when the label is absent; values are sorted and unique. */
    record In(String label, List<String> values) implements Expr {
        public In {
            label = checkLabel(label);
            values = sortedSet(values);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(label);
            return v != null && setContains(values, v);
        }

        public void appendCanonical(StringBuilder out) {
            appendSet(out, label, " in {", values);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code label not in {...}}: true when the label is absent (Calico semantics). */
    record NotIn(String label, List<String> values) implements Expr {
        public NotIn {
            label = checkLabel(label);
            values = sortedSet(values);
        }

        public boolean matches(Map<String, String> labels) {
            String v = labels.get(label);
            return v == null || !setContains(values, v);
        }

        public void appendCanonical(StringBuilder out) {
            appendSet(out, label, " not in {", values);
        }

        public void collectLabelKeys(Set<String> keys) {
            keys.add(label);
        }
    }

    /** {@code !operand}; rendered without parentheses, as And/Or bring their own. */
    record Not(Expr operand) implements Expr {
        public Not {
            Objects.requireNonNull(operand, "operand");
            if (operand instanceof Not) {
                throw new IllegalArgumentException("a Not must not wrap a Not: use Expr.not() to cancel the pair");
            }
        }

        public boolean matches(Map<String, String> labels) {
            return !operand.matches(labels);
        }

        public void appendCanonical(StringBuilder out) {
            out.append('!');
            operand.appendCanonical(out);
        }

        public void collectLabelKeys(Set<String> keys) {
            operand.collectLabelKeys(keys);
        }
    }

    /** {@code (a && b && ...)}: operands keep their source order. */
    record And(List<Expr> operands) implements Expr {
        public And {
            operands = checkOperands(operands, "And");
        }

        public boolean matches(Map<String, String> labels) {
            // Indexed loop: no iterator allocation on the hot path.
            for (int i = 0, n = operands.size(); i < n; i++) {
                if (!operands.get(i).matches(labels)) {
                    return false;
                }
            }
            return true;
        }

        public void appendCanonical(StringBuilder out) {
            appendJoined(out, operands, " && ");
        }

        public void collectLabelKeys(Set<String> keys) {
            operands.forEach(o -> o.collectLabelKeys(keys));
        }
    }

    /** {@code (a || b || ...)}: operands keep their source order. */
    record Or(List<Expr> operands) implements Expr {
        public Or {
            operands = checkOperands(operands, "Or");
        }

        public boolean matches(Map<String, String> labels) {
            for (int i = 0, n = operands.size(); i < n; i++) {
                if (operands.get(i).matches(labels)) {
                    return true;
                }
            }
            return false;
        }

        public void appendCanonical(StringBuilder out) {
            appendJoined(out, operands, " || ");
        }

        public void collectLabelKeys(Set<String> keys) {
            operands.forEach(o -> o.collectLabelKeys(keys));
        }
    }

    /** Go compares strings byte-wise (UTF-8), which orders like code points, not UTF-16 units. */
    Comparator<String> CODE_POINT_ORDER = (a, b) -> {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    };

    /** {@return whether {@code c} may appear in a label key} */
    static boolean isLabelChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '_' || c == '.' || c == '/' || c == '-';
    }

    /**
     * {@return the key, interned}: label maps decoded by Jackson have interned keys, so a
     * lookup then succeeds on the identity check instead of comparing characters.
     */
    private static String checkLabel(String label) {
        Objects.requireNonNull(label, "label");
        if (label.isEmpty()) {
            throw new IllegalArgumentException("label key must not be empty");
        }
        if (label.length() > MAX_LABEL_KEY_LENGTH) {
            throw new IllegalArgumentException("label key is " + label.length() + " characters long: at most "
                    + MAX_LABEL_KEY_LENGTH + " are allowed");
        }
        for (int i = 0; i < label.length(); i++) {
            if (!isLabelChar(label.charAt(i))) {
                throw new IllegalArgumentException("label key \"" + label + "\" has character '" + label.charAt(i)
                        + "' at " + i + ": only letters, digits, '_', '.', '/' and '-' are allowed");
            }
        }
        return label.intern();
    }

    private static void checkValue(String value) {
        Objects.requireNonNull(value, "value");
        if (value.indexOf('"') >= 0 && value.indexOf('\'') >= 0) {
            throw new IllegalArgumentException("value " + value
                    + " contains both quote characters and cannot be written in a selector");
        }
    }

    private static List<String> sortedSet(List<String> values) {
        Objects.requireNonNull(values, "values");
        List<String> sorted = new ArrayList<>(values.size());
        for (String v : values) {
            checkValue(v);
            sorted.add(v);
        }
        sorted.sort(CODE_POINT_ORDER);
        List<String> unique = new ArrayList<>(sorted.size());
        for (String v : sorted) {
            if (unique.isEmpty() || !unique.get(unique.size() - 1).equals(v)) {
                unique.add(v);
            }
        }
        return List.copyOf(unique);
    }

    /** Linear scan for small sets (cheaper than hashing), binary search above that. */
    private static boolean setContains(List<String> sorted, String v) {
        int n = sorted.size();
        if (n <= 8) {
            for (int i = 0; i < n; i++) {
                if (sorted.get(i).equals(v)) {
                    return true;
                }
            }
            return false;
        }
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = CODE_POINT_ORDER.compare(sorted.get(mid), v);
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return true;
            }
        }
        return false;
    }

    private static List<Expr> checkOperands(List<Expr> operands, String what) {
        List<Expr> copy = List.copyOf(operands);
        if (copy.size() < 2) {
            throw new IllegalArgumentException(what + " needs at least two operands, got " + copy.size());
        }
        return copy;
    }

    /** Double quotes unless the value holds one, as Calico does. */
    private static void appendQuoted(StringBuilder out, String value) {
        char q = value.indexOf('"') >= 0 ? '\'' : '"';
        out.append(q).append(value).append(q);
    }

    private static void appendComparison(StringBuilder out, String label, String op, String value) {
        out.append(label).append(op);
        appendQuoted(out, value);
    }

    private static void appendSet(StringBuilder out, String label, String opAndBrace, List<String> values) {
        out.append(label).append(opAndBrace);
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append(", ");
            }
            appendQuoted(out, values.get(i));
        }
        out.append('}');
    }

    private static void appendJoined(StringBuilder out, List<Expr> operands, String op) {
        out.append('(');
        for (int i = 0; i < operands.size(); i++) {
            if (i > 0) {
                out.append(op);
            }
            operands.get(i).appendCanonical(out);
        }
        out.append(')');
    }
}
