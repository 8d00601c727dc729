package calico.felix.calc;

import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;

/**
 * Logs each distinct warning once: the graph recomputes a broken policy on every related
 * change, and the operator needs the first report, not one per recomputation. Remembers the
 * most recent {@value #CAPACITY} messages, so a long-lived felix does not grow without bound.
 */
final class OnceLog {

    private static final int CAPACITY = 10_000;

    private final Logger log;
    private final Map<String, Boolean> seen = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > CAPACITY;
        }
    };

    OnceLog(Logger log) {
        this.log = log;
    }

    /** Formats like SLF4J ({@code {}} placeholders) and logs at WARN unless already logged. */
    void warn(String format, Object... args) {
        String message = org.slf4j.helpers.MessageFormatter.arrayFormat(format, args).getMessage();
        if (seen.put(message, Boolean.TRUE) == null) {
            log.warn(message);
        }
    }
}
