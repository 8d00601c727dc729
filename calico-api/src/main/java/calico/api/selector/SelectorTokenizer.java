package calico.api.selector;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits selector text into tokens the way Calico's tokenizer does:
 * <ul>
 *   <li>whitespace is only space and tab (Calico does not skip newlines);
 *   <li>strings are quoted with {@code '} or {@code "} and have no escapes;
 *   <li>{@code has(}, {@code all(} and {@code global(} must be written without a space
 *       before the parenthesis, and {@code has(label)} is one token;
 *   <li>right after a label only an operator may follow, and operator words are matched as
 *       prefixes ({@code startswith} and {@code notin} are accepted, as in Calico);
 *   <li>a label key is at most 512 characters long, as Calico's label-key pattern allows.
 * </ul>
 * Every token carries its character offset for error messages.
 */
final class SelectorTokenizer {

    enum Kind {
        LABEL, STRING, LBRACE, RBRACE, COMMA, EQ, NE, IN, NOT_IN, CONTAINS, STARTS_WITH, ENDS_WITH,
        NOT, HAS, ALL, GLOBAL, LPAREN, RPAREN, AND, OR, EOF
    }

    /** One token; {@code text} is the label or the unquoted string, else the source text. */
    record Token(Kind kind, String text, int position) {
        String describe() {
            return switch (kind) {
                case EOF -> "end of selector";
                case LABEL -> "label '" + text + "'";
                case STRING -> "string \"" + text + "\"";
                case HAS -> "has(" + text + ")";
                default -> "'" + text + "'";
            };
        }
    }

    private final String input;
    private final List<Token> tokens = new ArrayList<>();
    private int pos;

    private SelectorTokenizer(String input) {
        this.input = input;
    }

    /** {@return the tokens of {@code input}, ending with an EOF token at {@code input.length()}} */
    static List<Token> tokenize(String input) {
        SelectorTokenizer t = new SelectorTokenizer(input);
        t.run();
        return t.tokens;
    }

    private void run() {
        while (true) {
            skipWhitespace();
            if (pos >= input.length()) {
                tokens.add(new Token(Kind.EOF, "", input.length()));
                return;
            }
            int start = pos;
            char c = input.charAt(pos);
            switch (c) {
                case '(' -> single(Kind.LPAREN, "(");
                case ')' -> single(Kind.RPAREN, ")");
                case '{' -> single(Kind.LBRACE, "{");
                case '}' -> single(Kind.RBRACE, "}");
                case ',' -> single(Kind.COMMA, ",");
                case '"', '\'' -> quoted(c);
                case '=' -> pair('=', Kind.EQ, "'=='");
                case '&' -> pair('&', Kind.AND, "'&&'");
                case '|' -> pair('|', Kind.OR, "'||'");
                case '!' -> {
                    if (input.startsWith("!=", pos)) {
                        add(Kind.NE, "!=", start, 2);
                    } else {
                        single(Kind.NOT, "!");
                    }
                }
                default -> {
                    if (lastKind() == Kind.LABEL) {
                        operatorWord();
                    } else {
                        wordOrFunction();
                    }
                }
            }
        }
    }

    private Kind lastKind() {
        return tokens.isEmpty() ? null : tokens.get(tokens.size() - 1).kind();
    }

    private void skipWhitespace() {
        while (pos < input.length() && (input.charAt(pos) == ' ' || input.charAt(pos) == '\t')) {
            pos++;
        }
    }

    private void add(Kind kind, String text, int start, int length) {
        tokens.add(new Token(kind, text, start));
        pos = start + length;
    }

    private void single(Kind kind, String text) {
        add(kind, text, pos, 1);
    }

    private void pair(char second, Kind kind, String expected) {
        if (pos + 1 < input.length() && input.charAt(pos + 1) == second) {
            add(kind, input.substring(pos, pos + 2), pos, 2);
        } else {
            throw error(pos, "expected " + expected);
        }
    }

    private void quoted(char quote) {
        int close = input.indexOf(quote, pos + 1);
        if (close < 0) {
            throw error(input.length(), "expected " + quote + " to close the string opened at position " + pos);
        }
        tokens.add(new Token(Kind.STRING, input.substring(pos + 1, close), pos));
        pos = close + 1;
    }

    /** After a label: one of the word operators (the symbol ones are handled in run()). */
    private void operatorWord() {
        int start = pos;
        String label = tokens.get(tokens.size() - 1).text();
        if (input.startsWith("contains", pos)) {
            add(Kind.CONTAINS, "contains", start, "contains".length());
        } else if (input.startsWith("starts", pos)) {
            twoWords(start, "starts", "with", Kind.STARTS_WITH, "starts with");
        } else if (input.startsWith("ends", pos)) {
            twoWords(start, "ends", "with", Kind.ENDS_WITH, "ends with");
        } else if (input.startsWith("not", pos)) {
            twoWords(start, "not", "in", Kind.NOT_IN, "not in");
        } else if (input.startsWith("in", pos)) {
            add(Kind.IN, "in", start, 2);
        } else {
            throw error(pos, "expected an operator after label '" + label
                    + "' (==, !=, in, not in, contains, starts with, ends with)");
        }
    }

    private void twoWords(int start, String first, String second, Kind kind, String text) {
        pos += first.length();
        skipWhitespace();
        if (!input.startsWith(second, pos)) {
            throw error(pos, "expected '" + second + "' after '" + first + "'");
        }
        tokens.add(new Token(kind, text, start));
        pos += second.length();
    }

    private void wordOrFunction() {
        int start = pos;
        if (input.startsWith("has(", pos)) {
            pos += "has(".length();
            skipWhitespace();
            int labelStart = pos;
            int labelEnd = scanLabel(pos);
            if (labelEnd == labelStart) {
                throw error(pos, "expected a label name inside has(");
            }
            checkLength(labelStart, labelEnd);
            String label = input.substring(labelStart, labelEnd);
            pos = labelEnd;
            skipWhitespace();
            if (pos >= input.length() || input.charAt(pos) != ')') {
                throw error(pos, "expected ')' to close has(" + label);
            }
            add(Kind.HAS, label, start, pos + 1 - start);
        } else if (input.startsWith("all(", pos)) {
            emptyCall(start, "all(", Kind.ALL, "all()");
        } else if (input.startsWith("global(", pos)) {
            emptyCall(start, "global(", Kind.GLOBAL, "global()");
        } else {
            int end = scanLabel(pos);
            if (end == pos) {
                throw error(pos, "expected a label, quoted string, operator or parenthesis, found '"
                        + new String(Character.toChars(input.codePointAt(pos))) + "'");
            }
            checkLength(pos, end);
            add(Kind.LABEL, input.substring(pos, end), start, end - start);
        }
    }

    /**
     * Calico's tokenizer reads a label key as at most {@value Expr#MAX_LABEL_KEY_LENGTH}
     * characters ({@code [a-zA-Z0-9_./-]{1,512}}), so a longer key never parses there.
     */
    private void checkLength(int labelStart, int labelEnd) {
        if (labelEnd - labelStart > Expr.MAX_LABEL_KEY_LENGTH) {
            throw error(labelStart, "expected a label key of at most " + Expr.MAX_LABEL_KEY_LENGTH
                    + " characters, found one of " + (labelEnd - labelStart));
        }
    }

    private void emptyCall(int start, String open, Kind kind, String text) {
        pos += open.length();
        skipWhitespace();
        if (pos >= input.length() || input.charAt(pos) != ')') {
            throw error(pos, "expected ')' after " + open);
        }
        add(kind, text, start, pos + 1 - start);
    }

    private int scanLabel(int from) {
        int i = from;
        while (i < input.length() && Expr.isLabelChar(input.charAt(i))) {
            i++;
        }
        return i;
    }

    private SelectorParseException error(int position, String expected) {
        return new SelectorParseException(input, position, expected);
    }
}
