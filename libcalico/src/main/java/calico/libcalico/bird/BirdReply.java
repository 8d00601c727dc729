package calico.libcalico.bird;

import java.util.List;

/**
 * One answer on BIRD's control socket: the numbered lines up to the final one. Codes 0xxx
 * mean done, 1xxx table data, 2xxx table headings, 8xxx/9xxx errors (BIRD's doc/reply_codes).
 *
 * @param lines (code, text) in order; continuation lines (leading space) carry the previous code
 */
public record BirdReply(List<Line> lines) {

    public BirdReply {
        lines = List.copyOf(lines);
    }

    /** One reply line. */
    public record Line(int code, String text) {
    }

    /** {@return the code of the last line} */
    public int finalCode() {
        return lines.isEmpty() ? -1 : lines.get(lines.size() - 1).code();
    }

    public boolean error() {
        return lines.stream().anyMatch(l -> l.code() >= 8000);
    }

    /** {@return every line's text joined with newlines} */
    public String text() {
        return String.join("\n", lines.stream().map(Line::text).toList());
    }
}
