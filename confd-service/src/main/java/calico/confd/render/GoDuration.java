package calico.confd.render;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go duration strings ({@code 120s}, {@code 1h30m}) as whole seconds, for BIRD's timers. */
final class GoDuration {

    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ns|us|µs|ms|s|m|h)");
    private static final Map<String, Double> SECONDS = Map.of("ns", 1e-9, "us", 1e-6, "µs", 1e-6, "ms", 1e-3,
            "s", 1.0, "m", 60.0, "h", 3600.0);

    private GoDuration() {
    }

    /** {@return the duration rounded up to whole seconds} @throws IllegalArgumentException naming the text */
    static long seconds(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty duration");
        }
        Matcher m = PART.matcher(text);
        double total = 0;
        int end = 0;
        while (m.find() && m.start() == end) {
            total += Double.parseDouble(m.group(1)) * SECONDS.get(m.group(2));
            end = m.end();
        }
        if (end != text.length() && !text.equals("0")) {
            throw new IllegalArgumentException("\"" + text + "\" is not a duration such as 120s or 1h30m");
        }
        return (long) Math.ceil(total);
    }
}
