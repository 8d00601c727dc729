package calico.dataplane.nft;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * Compact JSON text of a Jackson tree, character for character what {@link JsonNode#toString()}
 * prints, written straight into a builder. {@code toString()} sets up a serializer for every
 * call; a catch-up batch formats tens of thousands of rules, and that set-up was the largest
 * part of the formatting and of the garbage the dataplane thread made.
 */
final class JsonText {

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private JsonText() {
    }

    static String of(JsonNode n) {
        StringBuilder out = new StringBuilder(64);
        write(n, out);
        return out.toString();
    }

    static void write(JsonNode n, StringBuilder out) {
        switch (n.getNodeType()) {
            case OBJECT -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, JsonNode> e : n.properties()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    quote(e.getKey(), out);
                    out.append(':');
                    write(e.getValue(), out);
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < n.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(n.get(i), out);
                }
                out.append(']');
            }
            case STRING -> quote(n.textValue(), out);
            case BOOLEAN -> out.append(n.booleanValue());
            case NULL -> out.append("null");
            case NUMBER -> {
                if (n.isInt() || n.isLong() || n.isShort()) {
                    out.append(n.longValue());
                } else {
                    out.append(n); // decimals and big numbers: Jackson's own form
                }
            }
            default -> out.append(n);
        }
    }

    /** {@code s} as a JSON string, escaped as Jackson escapes it (quote, backslash, control characters). */
    static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                switch (c) {
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    case '\b' -> out.append("\\b");
                    case '\f' -> out.append("\\f");
                    default -> out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                }
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
