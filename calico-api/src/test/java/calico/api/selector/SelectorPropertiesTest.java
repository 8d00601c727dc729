package calico.api.selector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Random selector trees in the test's own model ({@link G}) are rendered to text with
 * random spacing, quoting, set order, duplicate values, redundant parentheses and double
 * negations, then parsed. A straightforward evaluator over {@link G} is the oracle.
 */
class SelectorPropertiesTest {

    // Includes keys that spell keywords: the tokenizer must still read them as labels.
    static final List<String> KEYS = List.of("a", "b", "app.kubernetes.io/name", "projectcalico.org/namespace",
            "k8s-app", "has", "all", "in", "not", "contains", "x_y");
    static final List<String> VALUES = List.of("", "x", "y", "xy", "yx", "x-1", "it's", "say \"hi\"", "\u00df",
            new String(Character.toChars(0x1F600)), "\uFF21", "a b");

    enum Op { ALL, GLOBAL, HAS, EQ, NE, IN, NOT_IN, CONTAINS, STARTS, ENDS }

    /** The generator's own tree: independent of {@link Expr}. */
    sealed interface G permits Leaf, NotG, AndG, OrG {
    }

    record Leaf(Op op, String key, List<String> values) implements G {
    }

    record NotG(G operand) implements G {
    }

    record AndG(List<G> operands) implements G {
    }

    record OrG(List<G> operands) implements G {
    }

    /** The oracle: Calico's semantics written out plainly. */
    static boolean reference(G g, Map<String, String> labels) {
        if (g instanceof NotG n) {
            return !reference(n.operand(), labels);
        }
        if (g instanceof AndG a) {
            return a.operands().stream().allMatch(o -> reference(o, labels));
        }
        if (g instanceof OrG o) {
            return o.operands().stream().anyMatch(x -> reference(x, labels));
        }
        Leaf l = (Leaf) g;
        boolean present = labels.containsKey(l.key());
        String v = labels.get(l.key());
        String want = l.values().isEmpty() ? null : l.values().get(0);
        return switch (l.op()) {
            case ALL, GLOBAL -> true;
            case HAS -> present;
            case EQ -> present && v.equals(want);
            case NE -> !present || !v.equals(want);
            case IN -> present && l.values().contains(v);
            case NOT_IN -> !present || !l.values().contains(v);
            case CONTAINS -> present && v.contains(want);
            case STARTS -> present && v.startsWith(want);
            case ENDS -> present && v.endsWith(want);
        };
    }

    static Set<String> keysOf(G g) {
        Set<String> out = new TreeSet<>();
        collectKeys(g, out);
        return out;
    }

    private static void collectKeys(G g, Set<String> out) {
        if (g instanceof NotG n) {
            collectKeys(n.operand(), out);
        } else if (g instanceof AndG a) {
            a.operands().forEach(o -> collectKeys(o, out));
        } else if (g instanceof OrG o) {
            o.operands().forEach(x -> collectKeys(x, out));
        } else if (g instanceof Leaf l && l.op() != Op.ALL && l.op() != Op.GLOBAL) {
            out.add(l.key());
        }
    }

    // ---- rendering with random style ------------------------------------------------------

    static String render(G g, Random r) {
        StringBuilder sb = new StringBuilder();
        sb.append(ws(r));
        maybeParens(sb, g, r, r.nextInt(5) == 0);
        sb.append(ws(r));
        return sb.toString();
    }

    private static void maybeParens(StringBuilder sb, G g, Random r, boolean parens) {
        if (parens) {
            sb.append('(').append(ws(r));
            node(sb, g, r);
            sb.append(ws(r)).append(')');
        } else {
            node(sb, g, r);
        }
    }

    /** Operands of !, && and || need parentheses when they are && or || themselves. */
    private static void operand(StringBuilder sb, G g, Random r) {
        boolean composite = g instanceof AndG || g instanceof OrG;
        maybeParens(sb, g, r, composite || r.nextInt(6) == 0);
    }

    private static void node(StringBuilder sb, G g, Random r) {
        if (g instanceof NotG n) {
            if (r.nextInt(6) == 0 && !(n.operand() instanceof NotG)) {
                // Same meaning, three negations instead of one.
                sb.append("!").append(ws(r)).append("!").append(ws(r)).append("!").append(ws(r));
            } else {
                sb.append('!').append(ws(r));
            }
            operand(sb, n.operand(), r);
        } else if (g instanceof AndG a) {
            join(sb, a.operands(), "&&", r);
        } else if (g instanceof OrG o) {
            join(sb, o.operands(), "||", r);
        } else {
            leaf(sb, (Leaf) g, r);
        }
    }

    private static void join(StringBuilder sb, List<G> operands, String op, Random r) {
        for (int i = 0; i < operands.size(); i++) {
            if (i > 0) {
                sb.append(ws(r)).append(op).append(ws(r));
            }
            operand(sb, operands.get(i), r);
        }
    }

    private static void leaf(StringBuilder sb, Leaf l, Random r) {
        String k = l.key();
        switch (l.op()) {
            case ALL -> sb.append("all(").append(ws(r)).append(')');
            case GLOBAL -> sb.append("global(").append(ws(r)).append(')');
            case HAS -> sb.append("has(").append(ws(r)).append(k).append(ws(r)).append(')');
            case EQ -> sb.append(k).append(ws(r)).append("==").append(ws(r)).append(quote(l.values().get(0), r));
            case NE -> sb.append(k).append(ws(r)).append("!=").append(ws(r)).append(quote(l.values().get(0), r));
            case CONTAINS -> word(sb, k, "contains", l.values().get(0), r);
            case STARTS -> word(sb, k, "starts" + ws(r) + "with", l.values().get(0), r);
            case ENDS -> word(sb, k, "ends" + ws(r) + "with", l.values().get(0), r);
            case IN -> set(sb, k, "in", l.values(), r);
            case NOT_IN -> set(sb, k, "not" + ws(r) + "in", l.values(), r);
        }
    }

    private static void word(StringBuilder sb, String key, String op, String value, Random r) {
        sb.append(key).append(' ').append(ws(r)).append(op).append(ws(r)).append(quote(value, r));
    }

    private static void set(StringBuilder sb, String key, String op, List<String> values, Random r) {
        List<String> shown = new ArrayList<>(values);
        if (!shown.isEmpty() && r.nextBoolean()) {
            shown.add(shown.get(r.nextInt(shown.size()))); // duplicates collapse
        }
        Collections.shuffle(shown, r);
        sb.append(key).append(' ').append(ws(r)).append(op).append(ws(r)).append('{').append(ws(r));
        for (int i = 0; i < shown.size(); i++) {
            if (i > 0) {
                sb.append(ws(r)).append(',').append(ws(r));
            }
            sb.append(quote(shown.get(i), r));
        }
        if (!shown.isEmpty() && r.nextInt(4) == 0) {
            sb.append(ws(r)).append(','); // Calico accepts a trailing comma
        }
        sb.append(ws(r)).append('}');
    }

    private static String quote(String v, Random r) {
        boolean single = v.contains("\"") || (!v.contains("'") && r.nextBoolean());
        return single ? "'" + v + "'" : "\"" + v + "\"";
    }

    private static String ws(Random r) {
        return switch (r.nextInt(5)) {
            case 0 -> " ";
            case 1 -> "\t";
            case 2 -> "  ";
            default -> "";
        };
    }

    // ---- generators ---------------------------------------------------------------------

    @Provide
    Arbitrary<G> trees() {
        return tree(4);
    }

    private Arbitrary<G> tree(int depth) {
        Arbitrary<G> leaf = leaves();
        if (depth == 0) {
            return leaf;
        }
        Arbitrary<G> sub = Arbitraries.lazy(() -> tree(depth - 1));
        return Arbitraries.frequencyOf(
                Tuple.of(4, leaf),
                Tuple.of(1, sub.map(o -> (G) new NotG(o))),
                Tuple.of(2, sub.list().ofMinSize(2).ofMaxSize(4).map(os -> (G) new AndG(os))),
                Tuple.of(2, sub.list().ofMinSize(2).ofMaxSize(4).map(os -> (G) new OrG(os))));
    }

    private Arbitrary<G> leaves() {
        Arbitrary<String> key = Arbitraries.of(KEYS);
        Arbitrary<String> value = Arbitraries.oneOf(Arbitraries.of(VALUES),
                Arbitraries.strings().withChars("xy'").ofMaxLength(3));
        return Arbitraries.of(Op.class).flatMap(op -> switch (op) {
            case ALL, GLOBAL -> Arbitraries.just(new Leaf(op, "", List.of()));
            case HAS -> key.map(k -> new Leaf(op, k, List.of()));
            case IN, NOT_IN -> key.flatMap(k -> value.list().ofMaxSize(5).uniqueElements()
                    .map(vs -> new Leaf(op, k, vs)));
            default -> key.flatMap(k -> value.map(v -> new Leaf(op, k, List.of(v))));
        }).map(l -> (G) l);
    }

    @Provide
    Arbitrary<List<Map<String, String>>> labelMaps() {
        Arbitrary<Map<String, String>> one = Arbitraries.maps(Arbitraries.of(KEYS),
                Arbitraries.oneOf(Arbitraries.of(VALUES), Arbitraries.strings().withChars("xy'").ofMaxLength(3)))
                .ofMaxSize(KEYS.size());
        return one.list().ofMinSize(1).ofMaxSize(12);
    }

    // ---- properties ---------------------------------------------------------------------

    @Property(tries = 1000)
    void parsedTextAgreesWithTheOracleAndCanonicalIsAFixedPoint(@ForAll("trees") G g, @ForAll long seed,
            @ForAll("labelMaps") List<Map<String, String>> maps) {
        String text = render(g, new Random(seed));
        Selector s = Selector.parse(text);
        Selector again = Selector.parse(s.canonical());

        assertThat(again.canonical()).as("canonical of %s", text).isEqualTo(s.canonical());
        assertThat(again.uniqueId()).isEqualTo(s.uniqueId());
        assertThat(again.root()).isEqualTo(s.root());
        for (Map<String, String> labels : maps) {
            boolean expected = reference(g, labels);
            assertThat(s.matches(labels)).as("%s on %s", text, labels).isEqualTo(expected);
            assertThat(again.matches(labels)).as("%s on %s", s.canonical(), labels).isEqualTo(expected);
        }
        assertThat(s.labelKeys()).isEqualTo(keysOf(g));
    }

    @Property(tries = 500)
    void canonicalFormDoesNotDependOnSpelling(@ForAll("trees") G g, @ForAll long seed1, @ForAll long seed2) {
        Selector one = Selector.parse(render(g, new Random(seed1)));
        Selector two = Selector.parse(render(g, new Random(seed2)));
        assertThat(two.canonical()).isEqualTo(one.canonical());
        assertThat(two).isEqualTo(one);
    }

    @Property(tries = 300)
    void absentAndPresentBranchesOfEveryLeafAgreeWithTheOracle(@ForAll("trees") G g, @ForAll long seed) {
        // An empty map and a map with every key exercise the absent/present branches of every leaf.
        Selector s = Selector.parse(render(g, new Random(seed)));
        Map<String, String> none = Map.of();
        Map<String, String> all = new HashMap<>();
        KEYS.forEach(k -> all.put(k, "x"));
        assertThat(s.matches(none)).isEqualTo(reference(g, none));
        assertThat(s.matches(all)).isEqualTo(reference(g, all));
    }
}
