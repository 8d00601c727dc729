package calico.api.selector;

import calico.api.selector.SelectorTokenizer.Kind;
import calico.api.selector.SelectorTokenizer.Token;
import java.util.ArrayList;
import java.util.List;

/**
 * Recursive-descent parser over {@link SelectorTokenizer} tokens. Grammar (as Calico's):
 *
 * <pre>
 * selector  := EOF | or EOF
 * or        := and ('||' and)*
 * and       := unary ('&amp;&amp;' unary)*
 * unary     := '!'* operation            -- an even number of '!' cancels out
 * operation := has(label) | all() | global() | '(' or ')'
 *            | label ('==' | '!=' | contains | starts with | ends with) string
 *            | label (in | not in) '{' [string (',' string)* [',']] '}'
 * </pre>
 *
 * Precedence is therefore {@code !} over {@code &&} over {@code ||}, and {@code !a == "b"}
 * means {@code !(a == "b")}.
 */
final class SelectorParser {

    /**
     * Calico has no limit; we stop absurd nesting so that parsing, printing and matching
     * (all recursive) cannot overflow the stack on hostile input.
     */
    static final int MAX_NESTING = 128;

    private final String input;
    private final List<Token> tokens;
    private int next;
    private int depth;

    private SelectorParser(String input) {
        this.input = input;
        this.tokens = SelectorTokenizer.tokenize(input);
    }

    static Expr parse(String input) {
        SelectorParser p = new SelectorParser(input);
        if (p.peek().kind() == Kind.EOF) {
            return new Expr.All();
        }
        Expr e = p.or();
        if (p.peek().kind() != Kind.EOF) {
            throw p.error(p.peek(), "expected '&&', '||' or end of selector");
        }
        return e;
    }

    private Token peek() {
        return tokens.get(next);
    }

    private Token take() {
        return tokens.get(next++);
    }

    private Expr or() {
        Expr first = and();
        if (peek().kind() != Kind.OR) {
            return first;
        }
        List<Expr> operands = new ArrayList<>();
        operands.add(first);
        while (peek().kind() == Kind.OR) {
            next++;
            operands.add(and());
        }
        return new Expr.Or(operands);
    }

    private Expr and() {
        Expr first = unary();
        if (peek().kind() != Kind.AND) {
            return first;
        }
        List<Expr> operands = new ArrayList<>();
        operands.add(first);
        while (peek().kind() == Kind.AND) {
            next++;
            operands.add(unary());
        }
        return new Expr.And(operands);
    }

    private Expr unary() {
        boolean negated = false;
        while (peek().kind() == Kind.NOT) {
            negated = !negated;
            next++;
        }
        Expr e = operation();
        return negated ? Expr.not(e) : e;
    }

    private Expr operation() {
        Token t = take();
        switch (t.kind()) {
            case HAS:
                return new Expr.Has(t.text());
            case ALL:
                return new Expr.All();
            case GLOBAL:
                return new Expr.Global();
            case LPAREN: {
                if (++depth > MAX_NESTING) {
                    throw error(t, "expected at most " + MAX_NESTING + " levels of nested parentheses");
                }
                Expr inner = or();
                depth--;
                Token close = take();
                if (close.kind() != Kind.RPAREN) {
                    throw error(close, "expected '&&', '||' or ')' to close the '(' at position " + t.position());
                }
                return inner;
            }
            case LABEL:
                return comparison(t.text());
            default:
                throw error(t, "expected a label, has(label), all(), global(), '!' or '('");
        }
    }

    private Expr comparison(String label) {
        Token op = take();
        switch (op.kind()) {
            case EQ:
                return new Expr.Equals(label, string());
            case NE:
                return new Expr.NotEquals(label, string());
            case CONTAINS:
                return new Expr.Contains(label, string());
            case STARTS_WITH:
                return new Expr.StartsWith(label, string());
            case ENDS_WITH:
                return new Expr.EndsWith(label, string());
            case IN:
                return new Expr.In(label, set());
            case NOT_IN:
                return new Expr.NotIn(label, set());
            default:
                throw error(op, "expected an operator after label '" + label
                        + "' (==, !=, in, not in, contains, starts with, ends with)");
        }
    }

    private String string() {
        Token t = take();
        if (t.kind() != Kind.STRING) {
            throw error(t, "expected a quoted string");
        }
        return t.text();
    }

    /** Calico accepts an empty set and a trailing comma. */
    private List<String> set() {
        Token open = take();
        if (open.kind() != Kind.LBRACE) {
            throw error(open, "expected '{' to start a set of quoted strings");
        }
        List<String> values = new ArrayList<>();
        while (peek().kind() == Kind.STRING) {
            values.add(take().text());
            if (peek().kind() != Kind.COMMA) {
                break;
            }
            next++;
        }
        Token close = take();
        if (close.kind() != Kind.RBRACE) {
            throw error(close, values.isEmpty() || tokens.get(next - 2).kind() == Kind.COMMA
                    ? "expected a quoted string or '}'"
                    : "expected ',' or '}'");
        }
        return values;
    }

    private SelectorParseException error(Token at, String expected) {
        String found = at.kind() == Kind.EOF ? "" : ", found " + at.describe();
        return new SelectorParseException(input, at.position(), expected + found);
    }
}
