package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.List;

/**
 * One rule's match and target arguments, as separate words ({@code -p tcp --dport 80 -j DROP}),
 * without the {@code -A chain} part. Words are quoted only when rendered, so a comment with
 * spaces stays one word.
 */
public record Rule(List<String> args) {

    public Rule {
        if (args == null || args.isEmpty()) {
            throw new IllegalArgumentException("rule args: must not be empty");
        }
        for (String a : args) {
            if (a == null || a.indexOf('\n') >= 0 || a.indexOf('\r') >= 0 || a.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("rule args: word " + a + " must not be null or contain a newline or NUL");
            }
        }
        args = List.copyOf(args);
    }

    public static Rule of(String... args) {
        return new Rule(List.of(args));
    }

    /** {@return this rule with {@code -m comment --comment <text>} in front}, as Calico tags its rules ({@code cali:<hash>}). */
    public Rule withComment(String text) {
        if (text.length() > 255) {
            throw new IllegalArgumentException("rule comment: at most 255 characters, got " + text.length());
        }
        List<String> all = new ArrayList<>(List.of("-m", "comment", "--comment", text));
        all.addAll(args);
        return new Rule(all);
    }

    /** {@return the words joined for restore input}, each quoted as iptables-save would print it. */
    public String render() {
        StringBuilder b = new StringBuilder();
        for (String a : args) {
            if (!b.isEmpty()) {
                b.append(' ');
            }
            b.append(quote(a));
        }
        return b.toString();
    }

    /**
     * Double-quotes a word that is empty or holds whitespace or quotes, escaping {@code "} and
     * {@code \}; iptables-restore's tokenizer undoes exactly this.
     */
    static String quote(String word) {
        boolean needs = word.isEmpty();
        for (int i = 0; i < word.length() && !needs; i++) {
            char c = word.charAt(i);
            needs = Character.isWhitespace(c) || c == '"' || c == '\'' || c == '\\';
        }
        if (!needs) {
            return word;
        }
        return '"' + word.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
