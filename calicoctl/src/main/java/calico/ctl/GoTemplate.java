package calico.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The part of Go's {@code text/template} that calicoctl's {@code -o go-template=} is used with, run
 * over resources in their JSON form. Actions: text, {@code {{/* comments *}{@literal /}}}, trim
 * markers {@code {{-} / {@code -}}}, fields ({@code .ObjectMeta.Name}, {@code .Spec.CIDR}: Go's
 * field names match JSON keys ignoring case, {@code ObjectMeta}/{@code ListMeta} is {@code metadata},
 * {@code TypeMeta} the object itself, and metadata's fields are promoted as in Calico's structs),
 * {@code $} and variables ({@code {{range $i, $e := .Items}}}), string, raw-string and number
 * literals, pipelines with {@code |}, {@code if}/{@code else if}/{@code else}, {@code range}
 * (with {@code else}), {@code with}, and the functions {@code index}, {@code len}, {@code printf}
 * ({@code %s %v %d %q}), {@code print}, {@code println}, {@code eq}, {@code ne}, {@code not},
 * {@code and}, {@code or} and calicoctl's {@code join} and {@code joinAndTruncate}. A malformed
 * template is an {@link IllegalArgumentException} naming the position and what is wrong.
 */
final class GoTemplate {

    private sealed interface Node permits Text, Action, If, Range, With {
    }

    private record Text(String text) implements Node {
    }

    /** A pipeline whose value is printed; {@code declare} assigns it to a variable instead. */
    private record Action(Pipeline pipeline) implements Node {
    }

    private record If(Pipeline condition, List<Node> then, List<Node> otherwise) implements Node {
    }

    private record Range(String keyVar, String valueVar, Pipeline over, List<Node> body, List<Node> otherwise)
            implements Node {
    }

    private record With(Pipeline value, List<Node> body, List<Node> otherwise) implements Node {
    }

    /** Commands joined by {@code |}; each command's value is the last argument of the next. */
    private record Pipeline(String declare, List<List<Term>> commands) {
    }

    private sealed interface Term permits Field, Variable, Literal, Function, Sub {
    }

    /** {@code .A.B} (an empty path is {@code .}), optionally on a variable or a parenthesised pipeline. */
    private record Field(List<String> path) implements Term {
    }

    private record Variable(String name, List<String> path) implements Term {
    }

    private record Literal(JsonNode value) implements Term {
    }

    private record Function(String name) implements Term {
    }

    private record Sub(Pipeline pipeline, List<String> path) implements Term {
    }

    private final List<Node> root;

    private GoTemplate(List<Node> root) {
        this.root = root;
    }

    /** {@return {@code text} parsed}; a malformed template throws, naming where and why. */
    static GoTemplate parse(String text) {
        return new Parser(text).parseAll();
    }

    /** {@return the template run over {@code data}} */
    String execute(JsonNode data) {
        StringBuilder out = new StringBuilder();
        Deque<Map<String, JsonNode>> scopes = new ArrayDeque<>();
        scopes.push(new HashMap<>(Map.of("$", data)));
        run(root, data, scopes, out);
        return out.toString();
    }

    // ------------------------------------------------------------------ execution

    private void run(List<Node> nodes, JsonNode dot, Deque<Map<String, JsonNode>> scopes, StringBuilder out) {
        for (Node n : nodes) {
            if (n instanceof Text t) {
                out.append(t.text());
            } else if (n instanceof Action a) {
                JsonNode v = eval(a.pipeline(), dot, scopes);
                if (a.pipeline().declare() == null) {
                    out.append(print(v));
                }
            } else if (n instanceof If i) {
                run(truth(eval(i.condition(), dot, scopes)) ? i.then() : i.otherwise(), dot, scopes, out);
            } else if (n instanceof With w) {
                JsonNode v = eval(w.value(), dot, scopes);
                if (truth(v)) {
                    run(w.body(), v, scopes, out);
                } else {
                    run(w.otherwise(), dot, scopes, out);
                }
            } else if (n instanceof Range r) {
                range(r, dot, scopes, out);
            }
        }
    }

    private void range(Range r, JsonNode dot, Deque<Map<String, JsonNode>> scopes, StringBuilder out) {
        JsonNode over = eval(r.over(), dot, scopes);
        List<Map.Entry<JsonNode, JsonNode>> entries = new ArrayList<>();
        if (over.isArray()) {
            for (int i = 0; i < over.size(); i++) {
                entries.add(Map.entry(JsonNodeFactory.instance.numberNode(i), over.get(i)));
            }
        } else if (over.isObject()) {
            new TreeMap<String, JsonNode>(toMap(over)).forEach(
                    (k, v) -> entries.add(Map.entry(JsonNodeFactory.instance.textNode(k), v)));
        } else if (!over.isMissingNode() && !over.isNull()) {
            throw new IllegalArgumentException("range can't iterate over " + print(over));
        }
        if (entries.isEmpty()) {
            run(r.otherwise(), dot, scopes, out);
            return;
        }
        for (Map.Entry<JsonNode, JsonNode> e : entries) {
            Map<String, JsonNode> scope = new HashMap<>();
            if (r.keyVar() != null) {
                scope.put(r.keyVar(), e.getKey());
            }
            if (r.valueVar() != null) {
                scope.put(r.valueVar(), e.getValue());
            }
            scopes.push(scope);
            try {
                run(r.body(), e.getValue(), scopes, out);
            } finally {
                scopes.pop();
            }
        }
    }

    private JsonNode eval(Pipeline p, JsonNode dot, Deque<Map<String, JsonNode>> scopes) {
        JsonNode value = null;
        for (List<Term> command : p.commands()) {
            value = command(command, value, dot, scopes);
        }
        if (p.declare() != null) {
            scopes.peek().put(p.declare(), value);
        }
        return value;
    }

    private JsonNode command(List<Term> terms, JsonNode piped, JsonNode dot, Deque<Map<String, JsonNode>> scopes) {
        Term head = terms.get(0);
        if (head instanceof Function f) {
            List<JsonNode> args = new ArrayList<>();
            for (Term t : terms.subList(1, terms.size())) {
                args.add(term(t, dot, scopes));
            }
            if (piped != null) {
                args.add(piped);
            }
            return call(f.name(), args);
        }
        if (terms.size() > 1 || piped != null) {
            throw new IllegalArgumentException("can't give argument to non-function " + describe(head));
        }
        return term(head, dot, scopes);
    }

    private JsonNode term(Term t, JsonNode dot, Deque<Map<String, JsonNode>> scopes) {
        if (t instanceof Field f) {
            return walk(dot, f.path());
        }
        if (t instanceof Variable v) {
            return walk(variable(v.name(), scopes), v.path());
        }
        if (t instanceof Literal l) {
            return l.value();
        }
        if (t instanceof Sub sub) {
            return walk(eval(sub.pipeline(), dot, scopes), sub.path());
        }
        return call(((Function) t).name(), List.of());
    }

    private static JsonNode variable(String name, Deque<Map<String, JsonNode>> scopes) {
        for (Map<String, JsonNode> scope : scopes) {
            if (scope.containsKey(name)) {
                return scope.get(name);
            }
        }
        throw new IllegalArgumentException("undefined variable: " + name);
    }

    private static JsonNode walk(JsonNode from, List<String> path) {
        JsonNode n = from;
        for (String name : path) {
            n = field(n, name);
        }
        return n;
    }

    /** A Go field of a resource's JSON form: its key, ignoring case; metadata's fields are promoted. */
    private static JsonNode field(JsonNode n, String name) {
        if (n == null || !n.isObject()) {
            return MissingNode.getInstance();
        }
        if (n.has(name)) {
            return n.get(name);
        }
        if (name.equals("ObjectMeta") || name.equals("ListMeta")) {
            return n.path("metadata");
        }
        if (name.equals("TypeMeta")) {
            return n;
        }
        Iterator<String> keys = n.fieldNames();
        while (keys.hasNext()) {
            String k = keys.next();
            if (k.equalsIgnoreCase(name)) {
                return n.get(k);
            }
        }
        JsonNode meta = n.get("metadata");
        return meta != null && meta.isObject() && !name.equalsIgnoreCase("metadata") ? field(meta, name)
                : MissingNode.getInstance();
    }

    private static JsonNode call(String name, List<JsonNode> a) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        return switch (name) {
            case "index" -> {
                need(name, a, 1, Integer.MAX_VALUE);
                JsonNode n = a.get(0);
                for (JsonNode key : a.subList(1, a.size())) {
                    n = key.isNumber() ? n.path(key.asInt()) : n.path(key.asText());
                }
                yield n;
            }
            case "len" -> {
                need(name, a, 1, 1);
                JsonNode n = a.get(0);
                yield f.numberNode(n.isTextual() ? n.asText().length() : n.size());
            }
            case "not" -> {
                need(name, a, 1, 1);
                yield f.booleanNode(!truth(a.get(0)));
            }
            case "and" -> {
                need(name, a, 1, Integer.MAX_VALUE);
                JsonNode last = a.get(0);
                for (JsonNode n : a) {
                    last = n;
                    if (!truth(n)) {
                        break;
                    }
                }
                yield last;
            }
            case "or" -> {
                need(name, a, 1, Integer.MAX_VALUE);
                JsonNode last = a.get(0);
                for (JsonNode n : a) {
                    last = n;
                    if (truth(n)) {
                        break;
                    }
                }
                yield last;
            }
            case "eq" -> {
                need(name, a, 2, Integer.MAX_VALUE);
                yield f.booleanNode(a.subList(1, a.size()).stream().anyMatch(b -> same(a.get(0), b)));
            }
            case "ne" -> {
                need(name, a, 2, 2);
                yield f.booleanNode(!same(a.get(0), a.get(1)));
            }
            case "print" -> f.textNode(String.join("", a.stream().map(GoTemplate::print).toList()));
            case "println" -> f.textNode(String.join(" ", a.stream().map(GoTemplate::print).toList()) + "\n");
            case "printf" -> {
                need(name, a, 1, Integer.MAX_VALUE);
                yield f.textNode(printf(a.get(0).asText(), a.subList(1, a.size())));
            }
            case "join" -> {
                need(name, a, 2, 2);
                yield f.textNode(join(a.get(0), a.get(1).asText(), 0));
            }
            case "joinAndTruncate" -> {
                need(name, a, 3, 3);
                yield f.textNode(join(a.get(0), a.get(1).asText(), a.get(2).asInt()));
            }
            default -> throw new IllegalArgumentException("function \"" + name + "\" not defined");
        };
    }

    private static void need(String fn, List<JsonNode> args, int min, int max) {
        if (args.size() < min || args.size() > max) {
            throw new IllegalArgumentException("wrong number of args for " + fn + ": got " + args.size());
        }
    }

    private static boolean same(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        return print(a).equals(print(b)) && a.isTextual() == b.isTextual();
    }

    /** calicoctl's join: a list's items printed and joined; {@code max} > 0 truncates with "...". */
    private static String join(JsonNode items, String separator, int max) {
        String s;
        if (items.isArray()) {
            List<String> parts = new ArrayList<>();
            items.forEach(i -> parts.add(print(i)));
            s = String.join(separator, parts);
        } else {
            s = print(items);
        }
        return max > 0 && s.length() > max ? s.substring(0, Math.max(0, max - 3)) + "..." : s;
    }

    private static String printf(String format, List<JsonNode> args) {
        StringBuilder out = new StringBuilder();
        int next = 0;
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            char verb = format.charAt(++i);
            if (verb == '%') {
                out.append('%');
                continue;
            }
            if (next >= args.size()) {
                out.append("%!").append(verb).append("(MISSING)");
                continue;
            }
            JsonNode v = args.get(next++);
            switch (verb) {
                case 's', 'v', 'd' -> out.append(print(v));
                case 'q' -> out.append('"').append(print(v).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
                default -> out.append("%!").append(verb).append('(').append(print(v)).append(')');
            }
        }
        return out.toString();
    }

    /** Go's truth: false, 0, nil, and empty strings, lists and maps are false. */
    private static boolean truth(JsonNode v) {
        if (v == null || v.isMissingNode() || v.isNull()) {
            return false;
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isNumber()) {
            return v.asDouble() != 0;
        }
        if (v.isTextual()) {
            return !v.asText().isEmpty();
        }
        return v.size() > 0;
    }

    /** As Go prints values: strings bare, lists {@code [a b]}, maps {@code map[k:v]} by key; absent fields empty. */
    private static String print(JsonNode v) {
        if (v == null || v.isMissingNode()) {
            return "";
        }
        if (v.isNull()) {
            return "<nil>";
        }
        if (v.isArray()) {
            List<String> parts = new ArrayList<>();
            v.forEach(i -> parts.add(print(i)));
            return "[" + String.join(" ", parts) + "]";
        }
        if (v.isObject()) {
            StringBuilder sb = new StringBuilder("map[");
            boolean first = true;
            for (Map.Entry<String, JsonNode> e : new TreeMap<>(toMap(v)).entrySet()) {
                sb.append(first ? "" : " ").append(e.getKey()).append(':').append(print(e.getValue()));
                first = false;
            }
            return sb.append(']').toString();
        }
        return v.asText();
    }

    private static Map<String, JsonNode> toMap(JsonNode object) {
        Map<String, JsonNode> m = new HashMap<>();
        object.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue()));
        return m;
    }

    private static String describe(Term t) {
        if (t instanceof Field f) {
            return "." + String.join(".", f.path());
        }
        if (t instanceof Variable v) {
            return v.name();
        }
        if (t instanceof Literal l) {
            return l.value().toString();
        }
        return t instanceof Function f ? f.name() : "(...)";
    }

    // ------------------------------------------------------------------ parsing

    /** A recursive-descent reader of the template text. */
    private static final class Parser {
        private final String src;
        private int pos;
        /** The action being read, for errors. */
        private int actionStart;

        Parser(String src) {
            this.src = src;
        }

        GoTemplate parseAll() {
            List<Node> nodes = new ArrayList<>();
            String end = list(nodes);
            if (end != null) {
                throw error("unexpected {{" + end + "}}");
            }
            return new GoTemplate(nodes);
        }

        /** Reads nodes until {{end}}, {{else ...}} or the end of input; {@return that keyword} or null at the end. */
        private String list(List<Node> into) {
            StringBuilder text = new StringBuilder();
            while (pos < src.length()) {
                int open = src.indexOf("{{", pos);
                if (open < 0) {
                    text.append(src, pos, src.length());
                    pos = src.length();
                    break;
                }
                text.append(src, pos, open);
                actionStart = open;
                pos = open + 2;
                if (src.startsWith("- ", pos) || src.startsWith("-\t", pos) || src.startsWith("-\n", pos)) {
                    trimRight(text);
                    pos++;
                }
                skipSpaces();
                if (src.startsWith("/*", pos)) {
                    int close = src.indexOf("*/", pos);
                    if (close < 0) {
                        throw error("unclosed comment");
                    }
                    pos = close + 2;
                    closeAction();
                    continue;
                }
                String word = peekWord();
                switch (word) {
                    case "end", "else" -> {
                        flush(text, into);
                        return word;
                    }
                    case "if" -> {
                        flush(text, into);
                        pos += 2;
                        into.add(ifNode());
                    }
                    case "range" -> {
                        flush(text, into);
                        pos += 5;
                        into.add(rangeNode());
                    }
                    case "with" -> {
                        flush(text, into);
                        pos += 4;
                        into.add(withNode());
                    }
                    default -> {
                        flush(text, into);
                        Pipeline p = pipeline(true);
                        closeAction();
                        into.add(new Action(p));
                    }
                }
            }
            flush(text, into);
            return null;
        }

        private If ifNode() {
            Pipeline cond = pipeline(false);
            closeAction();
            List<Node> then = new ArrayList<>();
            String end = list(then);
            List<Node> otherwise = new ArrayList<>();
            if ("else".equals(end)) {
                pos += 4;
                skipSpaces();
                if (peekWord().equals("if")) {
                    pos += 2;
                    otherwise.add(ifNode());
                    return new If(cond, then, otherwise);
                }
                closeAction();
                end = list(otherwise);
            }
            expectEnd(end, "if");
            return new If(cond, then, otherwise);
        }

        private Range rangeNode() {
            skipSpaces();
            String key = null;
            String value = null;
            int save = pos;
            if (peek() == '$') {
                String first = variableName();
                skipSpaces();
                if (peek() == ',') {
                    pos++;
                    skipSpaces();
                    key = first;
                    value = variableName();
                    skipSpaces();
                } else {
                    value = first;
                }
                if (src.startsWith(":=", pos)) {
                    pos += 2;
                } else {
                    pos = save;
                    key = null;
                    value = null;
                }
            }
            Pipeline over = pipeline(false);
            Branches b = branches("range");
            return new Range(key, value, over, b.body(), b.otherwise());
        }

        private With withNode() {
            Pipeline value = pipeline(false);
            Branches b = branches("with");
            return new With(value, b.body(), b.otherwise());
        }

        /** What a {@code range} or {@code with} holds: its body, and what its {@code {{else}}} holds. */
        private record Branches(List<Node> body, List<Node> otherwise) {
        }

        /** Reads from the end of the opening action to the {@code {{end}}}. */
        private Branches branches(String what) {
            closeAction();
            List<Node> body = new ArrayList<>();
            String end = list(body);
            List<Node> otherwise = new ArrayList<>();
            if ("else".equals(end)) {
                pos += 4;
                closeAction();
                end = list(otherwise);
            }
            expectEnd(end, what);
            return new Branches(body, otherwise);
        }

        private void expectEnd(String end, String what) {
            if (!"end".equals(end)) {
                throw error("unexpected EOF: {{" + what + "}} has no {{end}}");
            }
            pos += 3;
            closeAction();
        }

        /** A pipeline up to the closing braces or a ')'; {@code declarations} allows {@code $x := ...}. */
        private Pipeline pipeline(boolean declarations) {
            skipSpaces();
            String declare = null;
            if (declarations && peek() == '$') {
                int save = pos;
                String name = variableName();
                skipSpaces();
                if (src.startsWith(":=", pos)) {
                    pos += 2;
                    declare = name;
                } else {
                    pos = save;
                }
            }
            List<List<Term>> commands = new ArrayList<>();
            List<Term> command = new ArrayList<>();
            while (true) {
                skipSpaces();
                if (atActionEnd() || peek() == ')') {
                    break;
                }
                if (peek() == '|') {
                    pos++;
                    if (command.isEmpty()) {
                        throw error("missing command before |");
                    }
                    commands.add(command);
                    command = new ArrayList<>();
                    continue;
                }
                command.add(term());
            }
            if (command.isEmpty()) {
                throw error(commands.isEmpty() ? "missing value" : "missing command after |");
            }
            commands.add(command);
            return new Pipeline(declare, commands);
        }

        private Term term() {
            char c = peek();
            if (c == '.') {
                return new Field(path());
            }
            if (c == '$') {
                String name = variableName();
                return new Variable(name, peek() == '.' ? path() : List.of());
            }
            if (c == '"') {
                return new Literal(JsonNodeFactory.instance.textNode(quoted()));
            }
            if (c == '`') {
                int close = src.indexOf('`', pos + 1);
                if (close < 0) {
                    throw error("unterminated raw string");
                }
                String s = src.substring(pos + 1, close);
                pos = close + 1;
                return new Literal(JsonNodeFactory.instance.textNode(s));
            }
            if (c == '(') {
                pos++;
                Pipeline inner = pipeline(false);
                skipSpaces();
                if (peek() != ')') {
                    throw error("unclosed left paren");
                }
                pos++;
                return new Sub(inner, peek() == '.' ? path() : List.of());
            }
            if (c == '-' || Character.isDigit(c)) {
                int start = pos++;
                while (pos < src.length() && (Character.isDigit(src.charAt(pos)) || src.charAt(pos) == '.')) {
                    pos++;
                }
                String num = src.substring(start, pos);
                try {
                    return new Literal(num.contains(".") ? JsonNodeFactory.instance.numberNode(Double.parseDouble(num))
                            : JsonNodeFactory.instance.numberNode(Long.parseLong(num)));
                } catch (NumberFormatException e) {
                    throw error("bad number syntax: " + num);
                }
            }
            String word = peekWord();
            if (word.isEmpty()) {
                throw error("unexpected \"" + c + "\" in command");
            }
            pos += word.length();
            return switch (word) {
                case "true" -> new Literal(JsonNodeFactory.instance.booleanNode(true));
                case "false" -> new Literal(JsonNodeFactory.instance.booleanNode(false));
                case "nil" -> new Literal(NullNode.getInstance());
                default -> new Function(word);
            };
        }

        /** {@code .A.B...}; a lone {@code .} is the empty path. */
        private List<String> path() {
            List<String> path = new ArrayList<>();
            while (peek() == '.') {
                pos++;
                String name = peekWord();
                if (name.isEmpty()) {
                    break;
                }
                path.add(name);
                pos += name.length();
            }
            return path;
        }

        private String variableName() {
            int start = pos++;
            while (pos < src.length() && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
                pos++;
            }
            return src.substring(start, pos);
        }

        private String quoted() {
            StringBuilder s = new StringBuilder();
            pos++;
            while (pos < src.length() && src.charAt(pos) != '"') {
                char c = src.charAt(pos++);
                if (c == '\\' && pos < src.length()) {
                    char e = src.charAt(pos++);
                    s.append(switch (e) {
                        case 'n' -> '\n';
                        case 't' -> '\t';
                        case 'r' -> '\r';
                        default -> e;
                    });
                } else {
                    s.append(c);
                }
            }
            if (pos >= src.length()) {
                throw error("unterminated quoted string");
            }
            pos++;
            return s.toString();
        }

        private String peekWord() {
            int end = pos;
            while (end < src.length() && (Character.isLetterOrDigit(src.charAt(end)) || src.charAt(end) == '_')) {
                end++;
            }
            return src.substring(pos, end);
        }

        private char peek() {
            return pos < src.length() ? src.charAt(pos) : '\0';
        }

        private boolean atActionEnd() {
            return src.startsWith("}}", pos) || src.startsWith("-}}", pos) || pos >= src.length();
        }

        private void skipSpaces() {
            while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
                pos++;
            }
        }

        /** Consumes {@code }}} (or {@code -}}}, which also trims the whitespace after it). */
        private void closeAction() {
            skipSpaces();
            if (src.startsWith("-}}", pos)) {
                pos += 3;
                while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
                    pos++;
                }
            } else if (src.startsWith("}}", pos)) {
                pos += 2;
            } else {
                throw error(pos >= src.length() ? "unclosed action" : "unexpected \"" + peek() + "\" in action");
            }
        }

        private static void trimRight(StringBuilder text) {
            int n = text.length();
            while (n > 0 && Character.isWhitespace(text.charAt(n - 1))) {
                n--;
            }
            text.setLength(n);
        }

        private static void flush(StringBuilder text, List<Node> into) {
            if (!text.isEmpty()) {
                into.add(new Text(text.toString()));
                text.setLength(0);
            }
        }

        private IllegalArgumentException error(String what) {
            int line = 1;
            for (int i = 0; i < Math.min(actionStart, src.length()); i++) {
                if (src.charAt(i) == '\n') {
                    line++;
                }
            }
            return new IllegalArgumentException("template: get:" + line + ": " + what);
        }
    }

    /** Wraps one resource or a list as calicoctl hands them to the template: a slice of objects. */
    static JsonNode slice(JsonNode object) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        a.add(object);
        return a;
    }
}
