package calico.api.selector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SelectorTest {

    /** {@code labels("a=b", "c=d")}; a bare key maps to the empty string. */
    static Map<String, String> labels(String... kvs) {
        Map<String, String> m = new HashMap<>();
        for (String kv : kvs) {
            int eq = kv.indexOf('=');
            if (eq < 0) {
                m.put(kv, "");
            } else {
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return m;
    }

    static Stream<Arguments> matching() {
        return Stream.of(
                // equality, both quote styles
                arguments("a == 'b'", labels("a=b"), true),
                arguments("a == \"b\"", labels("a=b", "c=d"), true),
                arguments("a == 'b'", labels("a=c"), false),
                arguments("a == 'b'", labels(), false),
                arguments("a == ''", labels("a"), true),
                arguments("a == ''", labels(), false),
                // != matches when the label is absent (Calico)
                arguments("a != 'b'", labels(), true),
                arguments("a != 'b'", labels("a=c"), true),
                arguments("a != 'b'", labels("a=b"), false),
                // sets; not in matches when absent
                arguments("a in {'x', \"y\"}", labels("a=y"), true),
                arguments("a in {'x', 'y'}", labels("a=z"), false),
                arguments("a in {'x', 'y'}", labels(), false),
                arguments("a in {}", labels("a=x"), false),
                arguments("a not in {'x', 'y'}", labels(), true),
                arguments("a not in {'x', 'y'}", labels("a=x"), false),
                arguments("a not in {'x', 'y'}", labels("a=z"), true),
                arguments("a not in {}", labels("a=z"), true),
                arguments("a in {\"'\", '\"', \"c\"}", labels("a='"), true),
                arguments("a in {\"'\", '\"', \"c\"}", labels("a=\""), true),
                arguments("a in {'1','2','3','4','5','6','7','8','9','10'}", labels("a=7"), true),
                arguments("a in {'1','2','3','4','5','6','7','8','9','10'}", labels("a=11"), false),
                // has, all, global
                arguments("has(a)", labels("a"), true),
                arguments("has( a )", labels("b"), false),
                arguments("!has(a)", labels("b"), true),
                arguments("!has(a)", labels("a=x"), false),
                arguments("all()", labels(), true),
                arguments("all( )", labels("a=b"), true),
                arguments("global()", labels("projectcalico.org/namespace=ns1"), true),
                arguments("global()", labels(), true),
                arguments("", labels("a=b"), true),
                arguments(" \t ", labels(), true),
                arguments("!all()", labels(), false),
                // string operators
                arguments("a contains 'ell'", labels("a=hello"), true),
                arguments("a contains 'x'", labels("a=hello"), false),
                arguments("a contains ''", labels(), false),
                arguments("a starts with 'he'", labels("a=hello"), true),
                arguments("a startswith 'lo'", labels("a=hello"), false),
                arguments("a ends with 'lo'", labels("a=hello"), true),
                arguments("a ends   with 'he'", labels("a=hello"), false),
                arguments("a starts with 'x'", labels(), false),
                // prefixed keys
                arguments("projectcalico.org/namespace == 'default'",
                        labels("projectcalico.org/namespace=default"), true),
                arguments("app.kubernetes.io/name in {'web'} && has(pcns.projectcalico.org/name)",
                        labels("app.kubernetes.io/name=web", "pcns.projectcalico.org/name=ns"), true),
                arguments("k8s-app == 'kube_dns-1'", labels("k8s-app=kube_dns-1"), true),
                // precedence: ! > && > ||
                arguments("a == 'x' || b == 'y' && c == 'z'", labels("a=x"), true),
                arguments("(a == 'x' || b == 'y') && c == 'z'", labels("a=x"), false),
                arguments("!a == 'x' && has(b)", labels("a=y", "b"), true),
                arguments("!(a == 'x' && has(b))", labels("a=x", "b"), false),
                arguments("!!has(a)", labels("a"), true),
                arguments("!!!has(a)", labels("a"), false),
                arguments("! !! has(a)", labels(), true),
                arguments("!(!has(a) || has(b))", labels("a"), true),
                arguments("! a == 'a1' || ! b == 'b1'", labels("a=a1", "b=b1"), false),
                arguments("a != 'a1' && !b == 'b1'", labels("a=a1", "b=b1"), false));
    }

    @ParameterizedTest(name = "{0} on {1} -> {2}")
    @MethodSource("matching")
    void matchesLikeCalico(String selector, Map<String, String> labels, boolean expected) {
        Selector s = Selector.parse(selector);
        assertThat(s.matches(labels)).isEqualTo(expected);
        assertThat(Selector.parse(s.canonical()).matches(labels)).as("canonical form").isEqualTo(expected);
    }

    static Stream<Arguments> canonicalForms() {
        return Stream.of(
                arguments("", "all()"),
                arguments(" all() ", "all()"),
                arguments(" (all() )", "all()"),
                arguments("global( )", "global()"),
                arguments("a=='b'", "a == \"b\""),
                arguments("a == '\"'", "a == '\"'"),
                arguments("a == \"'\"", "a == \"'\""),
                arguments("a!='\"'", "a != '\"'"),
                arguments("a contains '\"'", "a contains '\"'"),
                arguments("a startswith '\"'", "a starts with '\"'"),
                arguments("a endswith \"'\"", "a ends with \"'\""),
                arguments("a notin{'x'}", "a not in {\"x\"}"),
                arguments("has(\tb )", "has(b)"),
                arguments("a in {\"z\", \"z\", \"x\", \"y\", \"x\", \"a\"}", "a in {\"a\", \"x\", \"y\", \"z\"}"),
                arguments("a in {'b',}", "a in {\"b\"}"),
                arguments("a in {}", "a in {}"),
                arguments("a in {'\"', \"'\"}", "a in {'\"', \"'\"}"),
                arguments("a == 'b' && c == 'd'", "(a == \"b\" && c == \"d\")"),
                arguments("a == 'b' || c == 'd' && e == 'f'", "(a == \"b\" || (c == \"d\" && e == \"f\"))"),
                arguments("a == 'b' && (c == 'd' && e == 'f')", "(a == \"b\" && (c == \"d\" && e == \"f\"))"),
                arguments("(a == 'b')", "a == \"b\""),
                arguments("!(k == 'v')", "!k == \"v\""),
                arguments("! (has( b)||! has(a ))", "!(has(b) || !has(a))"),
                arguments("! (a == \"b\"&&! c != \"d\")", "!(a == \"b\" && !c != \"d\")"),
                arguments("!!has(a)", "has(a)"),
                // Calico prints "!!has(a)" here, which re-parses to has(a); we cancel the pair
                // so that the canonical form is a fixed point.
                arguments("!(!has(a))", "has(a)"),
                arguments("!(!(a == 'x' && has(b)) && (c in {'e', 'd'}))",
                        "!(!(a == \"x\" && has(b)) && c in {\"d\", \"e\"})"));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("canonicalForms")
    void canonicalFormIsCalicosAndAFixedPoint(String input, String expected) {
        Selector s = Selector.parse(input);
        assertThat(s.canonical()).isEqualTo(expected);
        Selector again = Selector.parse(s.canonical());
        assertThat(again.canonical()).isEqualTo(expected);
        assertThat(again).isEqualTo(s);
        assertThat(again.root()).isEqualTo(s.root());
        assertThat(again.uniqueId()).isEqualTo(s.uniqueId());
    }

    /** Expected IDs are the ones in Calico's own parser tests. */
    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource
    void uniqueIdMatchesCalico(String input, String expected) {
        assertThat(Selector.parse(input).uniqueId()).isEqualTo(expected).hasSize(2 + 38);
    }

    static Stream<Arguments> uniqueIdMatchesCalico() {
        return Stream.of(
                arguments("", "s:5y5I3VdRZfDU01O--xXAPx2yxCQQqMf0M6IWug"),
                arguments(" (all() )", "s:5y5I3VdRZfDU01O--xXAPx2yxCQQqMf0M6IWug"),
                arguments("! (has( b)||! has(a ))", "s:Iss0uCleLYv1GSv_pNm7hAO58kE9jAx1NKyG3Q"),
                arguments("! (a == \"b\"&&! c != \"d\")", "s:lh3haoY1ikTRkd4UZu0nWSaIBknYLPJLX16d-w"));
    }

    static Stream<Arguments> errors() {
        return Stream.of(
                arguments("a == ", 5, "expected a quoted string"),
                arguments("b == b", 5, "expected a quoted string, found label 'b'"),
                arguments("b contains b", 11, "expected a quoted string"),
                arguments("b starts with b", 14, "expected a quoted string"),
                arguments("'b1' == b", 0, "expected a label, has(label), all(), global(), '!' or '(', found string"),
                arguments("b", 1, "expected an operator after label 'b'"),
                arguments("a b", 2, "expected an operator after label 'a'"),
                arguments("a ", 2, "expected an operator after label 'a'"),
                arguments("!", 1, "expected a label, has(label), all(), global(), '!' or '('"),
                arguments("foo == \"bar\" &", 13, "expected '&&'"),
                arguments("foo == \"bar\" |", 13, "expected '||'"),
                arguments("a = 'b'", 2, "expected '=='"),
                arguments("foo != ||", 7, "expected a quoted string, found '||'"),
                arguments("foo in {\"\", ||", 12, "expected a quoted string or '}'"),
                arguments("foo in {\"a\" \"b\"}", 12, "expected ',' or '}'"),
                arguments("foo in {,}", 8, "expected a quoted string or '}'"),
                arguments("foo in \"\"", 7, "expected '{' to start a set of quoted strings"),
                arguments("a == \"FOO", 9, "expected \" to close the string opened at position 5"),
                arguments("a == \"FOO'", 10, "expected \" to close the string opened at position 5"),
                arguments("a == 'FOO", 9, "expected ' to close the string opened at position 5"),
                arguments("(", 1, "expected a label"),
                arguments("(a == \"foo\"", 11, "expected '&&', '||' or ')' to close the '(' at position 0"),
                arguments(")", 0, "expected a label, has(label), all(), global(), '!' or '(', found ')'"),
                arguments("()", 1, "found ')'"),
                arguments("%", 0, "expected a label, quoted string, operator or parenthesis, found '%'"),
                arguments("a == \"b\" && %", 12, "found '%'"),
                arguments("has(foo) &&", 11, "expected a label"),
                arguments("has(foo) has(bar)", 9, "expected '&&', '||' or end of selector, found has(bar)"),
                arguments("has()", 4, "expected a label name inside has("),
                arguments("has(a", 5, "expected ')' to close has(a"),
                arguments("has (a)", 4, "expected an operator after label 'has'"),
                arguments("all(x)", 4, "expected ')' after all("),
                arguments("a starts 'x'", 9, "expected 'with' after 'starts'"),
                arguments("a not {'x'}", 6, "expected 'in' after 'not'"),
                arguments("a == 'b'\n", 8, "expected a label, quoted string, operator or parenthesis"),
                arguments("a == 'b' c == 'd'", 9, "expected '&&', '||' or end of selector, found label 'c'"),
                arguments("k".repeat(513) + " == 'v'", 0, "expected a label key of at most 512 characters, found one of 513"),
                arguments("x == 'y' && has(" + "k".repeat(513) + ")", 16, "at most 512 characters, found one of 513"));
    }

    @ParameterizedTest(name = "{0} at {1}: {2}")
    @MethodSource("errors")
    void rejectsWithPositionAndExpectation(String input, int position, String expected) {
        assertThatThrownBy(() -> Selector.parse(input))
                .isInstanceOfSatisfying(SelectorParseException.class, e -> {
                    assertThat(e.position()).isEqualTo(position);
                    assertThat(e.selector()).isEqualTo(input);
                    assertThat(e.getMessage())
                            .startsWith("invalid selector \"" + input + "\" at position " + position + ": ")
                            .contains(expected);
                });
    }

    @Test
    void acceptsALabelKeyOfExactlyCalicosLimit() {
        String key = "k".repeat(512);
        assertThat(Selector.parse(key + " == 'v' && has(" + key + ")").matches(Map.of(key, "v"))).isTrue();
        assertThatThrownBy(() -> new Expr.Equals(key + "k", "v")).hasMessageContaining("at most 512");
    }

    @Test
    void errorMessageHasTheDocumentedShape() {
        assertThatThrownBy(() -> Selector.parse("a == "))
                .hasMessage("invalid selector \"a == \" at position 5: expected a quoted string");
    }

    @Test
    void reportsTheLabelKeysItUses() {
        Selector s = Selector.parse(
                "(a == 'x' || !has(projectcalico.org/namespace)) && b not in {'y'} && c contains 'z' && all()");
        assertThat(s.labelKeys()).containsExactly("a", "b", "c", "projectcalico.org/namespace");
        assertThat(Selector.parse("all() || global()").labelKeys()).isEmpty();
        assertThatThrownBy(() -> s.labelKeys().add("d")).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void nullAndEmptyMeanAll() {
        assertThat(Selector.parse(null)).isEqualTo(Selector.all());
        assertThat(Selector.parse("")).isEqualTo(Selector.parse("all()"));
    }

    @Test
    void treeInvariantsKeepEveryTreePrintable() {
        var has = new Expr.Has("a");
        assertThatThrownBy(() -> new Expr.Not(new Expr.Not(has))).hasMessageContaining("Expr.not()");
        assertThat(Expr.not(Expr.not(has))).isEqualTo(has);
        assertThatThrownBy(() -> new Expr.And(List.of(has))).hasMessageContaining("at least two operands");
        assertThatThrownBy(() -> new Expr.Or(List.of())).hasMessageContaining("at least two operands");
        assertThatThrownBy(() -> new Expr.Has("a b")).hasMessageContaining("character ' ' at 1");
        assertThatThrownBy(() -> new Expr.Equals("", "v")).hasMessageContaining("must not be empty");
        assertThatThrownBy(() -> new Expr.Equals("a", "'\"")).hasMessageContaining("both quote characters");
        assertThat(new Expr.In("a", List.of("b", "a", "b")).values()).containsExactly("a", "b");
    }

    @Test
    void setsSortByCodePointLikeGo() {
        // U+FF21 (one UTF-16 unit) sorts after U+1F600 in UTF-16 order but before it in UTF-8.
        String emoji = new String(Character.toChars(0x1F600));
        Selector s = Selector.parse("a in {'" + emoji + "', '\uFF21'}");
        assertThat(s.canonical()).isEqualTo("a in {\"\uFF21\", \"" + emoji + "\"}");
        assertThat(s.matches(Map.of("a", emoji))).isTrue();
    }

    @Test
    void limitsNestingInsteadOfOverflowingTheStack() {
        String ok = "(".repeat(SelectorParser.MAX_NESTING) + "has(a)" + ")".repeat(SelectorParser.MAX_NESTING);
        assertThat(Selector.parse(ok).canonical()).isEqualTo("has(a)");
        String deep = "(".repeat(10_000) + "has(a)" + ")".repeat(10_000);
        assertThatThrownBy(() -> Selector.parse(deep))
                .isInstanceOfSatisfying(SelectorParseException.class,
                        e -> assertThat(e.position()).isEqualTo(SelectorParser.MAX_NESTING))
                .hasMessageContaining("expected at most 128 levels of nested parentheses");
    }

    @Test
    void treesBuiltInCodePrintAndReparseToThemselves() {
        var tree = new Expr.And(List.of(
                new Expr.And(List.of(new Expr.Has("a"), new Expr.Global())),
                Expr.not(new Expr.Or(List.of(new Expr.NotIn("b", List.of()), new Expr.Contains("c", "it's"))))));
        Selector s = Selector.of(tree);
        assertThat(s.canonical()).isEqualTo("((has(a) && global()) && !(b not in {} || c contains \"it's\"))");
        assertThat(Selector.parse(s.canonical()).root()).isEqualTo(tree);
    }

    @Test
    void absentMeansNullValue() {
        Map<String, String> withNull = new HashMap<>();
        withNull.put("a", null);
        assertThat(Selector.parse("has(a)").matches(withNull)).isFalse();
        assertThat(Selector.parse("a != 'x'").matches(withNull)).isTrue();
    }
}
