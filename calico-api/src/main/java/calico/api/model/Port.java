package calico.api.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * A port match as Calico writes it: a number ({@code 80}), a range ({@code "8000:8080"}) or
 * a named port ({@code "http"}). Serialised back in the form it was given.
 *
 * @param minPort first port of the range (0 for a named port)
 * @param maxPort last port of the range (0 for a named port)
 * @param name    the named port, or {@code null}
 */
public record Port(int minPort, int maxPort, String name) {

    public static Port of(int port) {
        return new Port(port, port, null);
    }

    public static Port range(int min, int max) {
        return new Port(min, max, null);
    }

    public static Port named(String name) {
        return new Port(0, 0, name);
    }

    /** Parses the YAML form. Range checks are the validator's job, so any integers pass here. */
    @JsonCreator
    public static Port parse(Object value) {
        if (value instanceof Number n) {
            return of(n.intValue());
        }
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("port must be a number, a range \"min:max\" or a name");
        }
        String t = s.trim();
        int colon = t.indexOf(':');
        try {
            if (colon >= 0) {
                return range(Integer.parseInt(t.substring(0, colon).trim()), Integer.parseInt(t.substring(colon + 1).trim()));
            }
            if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
                return of(Integer.parseInt(t));
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid port range \"" + s + "\"");
        }
        return named(t);
    }

    public boolean isNamed() {
        return name != null;
    }

    public boolean isRange() {
        return name == null && minPort != maxPort;
    }

    @JsonValue
    public Object toJson() {
        if (name != null) {
            return name;
        }
        return minPort == maxPort ? (Object) minPort : minPort + ":" + maxPort;
    }

    @Override
    public String toString() {
        return String.valueOf(toJson());
    }
}
