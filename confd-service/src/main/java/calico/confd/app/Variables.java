package calico.confd.app;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * confd's environment variables, read as calico-node's are: the first of several names that is set
 * and not blank wins; a value that cannot be used is refused naming the setting and the reason.
 */
final class Variables {

    /** {@code 30}, {@code 30s}, {@code 500ms}, {@code 2m}…: a whole number with an optional unit, seconds by default. */
    private static final Pattern SIMPLE_DURATION = Pattern.compile("([+-]?\\d+)(ns|us|ms|s|m|h|d)?");

    private final Map<String, String> values;

    /** {@code values}: read, never changed (not copied: {@link ConfdConfiguration#variablesRead} records the reads). */
    Variables(Map<String, String> values) {
        this.values = values;
    }

    /** {@return the value of the first of {@code names} that is set and not blank}, trimmed; {@code null} if none */
    String first(String... names) {
        for (String name : names) {
            String v = values.get(name);
            if (v != null && !v.isBlank()) {
                return v.trim();
            }
        }
        return null;
    }

    /** {@return {@link #first}, else {@code fallback}} */
    String or(String fallback, String... names) {
        String v = first(names);
        return v == null ? fallback : v;
    }

    /** A duration in seconds (or with a unit, or ISO-8601: {@code PT30S}); {@code described} names it in errors. */
    Duration seconds(String described, Duration fallback, String... names) {
        String raw = first(names);
        if (raw == null) {
            return fallback;
        }
        Matcher m = SIMPLE_DURATION.matcher(raw.toLowerCase(Locale.ROOT));
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                return switch (m.group(2) == null ? "s" : m.group(2)) {
                    case "ns" -> Duration.ofNanos(n);
                    case "us" -> Duration.ofNanos(n * 1000);
                    case "ms" -> Duration.ofMillis(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    case "d" -> Duration.ofDays(n);
                    default -> Duration.ofSeconds(n);
                };
            }
            return Duration.parse(raw);
        } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException(described + ": \"" + raw + "\" is not a number of seconds");
        }
    }

    /** A port number (0: any free one). */
    int port(String name, int fallback) {
        String raw = first(name);
        if (raw == null) {
            return fallback;
        }
        int port;
        try {
            port = Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": \"" + raw + "\" is not a port number");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(name + ": " + port + " is not a port number (0-65535)");
        }
        return port;
    }

    /** {@code true} or {@code false}, in any case. */
    boolean bool(String name, boolean fallback) {
        String raw = first(name);
        if (raw == null) {
            return fallback;
        }
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + ": \"" + raw + "\" is not true or false");
        };
    }
}
