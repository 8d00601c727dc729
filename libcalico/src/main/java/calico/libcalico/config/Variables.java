package calico.libcalico.config;

import calico.api.validation.Durations;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * A plain main's environment variables (confd's, felix's), read as calico-node's are: the first of several
 * names that is set and not blank wins; a value that cannot be used is refused naming the setting and the reason.
 */
public final class Variables {

    private final Map<String, String> values;

    /** {@code values}: read, never changed (not copied: a service's {@code variablesRead} records the reads). */
    public Variables(Map<String, String> values) {
        this.values = values;
    }

    /** {@return the value of the first of {@code names} that is set and not blank}, trimmed; {@code null} if none */
    public String first(String... names) {
        for (String name : names) {
            String v = values.get(name);
            if (v != null && !v.isBlank()) {
                return v.trim();
            }
        }
        return null;
    }

    /** {@return {@link #first}, else {@code fallback}} */
    public String or(String fallback, String... names) {
        String v = first(names);
        return v == null ? fallback : v;
    }

    /**
     * A duration: a whole number of seconds ({@code 30}), a Go duration ({@code 500ms}, {@code 1m30s}: calico-api's
     * {@link Durations}, as Calico's other duration settings) or ISO-8601 ({@code PT30S}); {@code described} names
     * it in errors.
     */
    public Duration seconds(String described, Duration fallback, String... names) {
        String raw = first(names);
        if (raw == null) {
            return fallback;
        }
        try {
            if (raw.matches("[+-]?\\d+")) {
                return Duration.ofSeconds(Long.parseLong(raw));
            }
            return Durations.parse(raw).orElseGet(() -> Duration.parse(raw));
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException(described + ": \"" + raw + "\" is not a number of seconds");
        }
    }

    /** A port number (0: any free one). */
    public int port(String name, int fallback) {
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
    public boolean bool(String name, boolean fallback) {
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

    /**
     * {@return a plain main's variables}: the process environment, then its {@code --NAME=value} arguments,
     * which win
     *
     * @throws IllegalArgumentException naming an argument of another form
     */
    public static Map<String, String> environmentAndArguments(String[] args) {
        Map<String, String> variables = new HashMap<>(System.getenv());
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 3) {
                throw new IllegalArgumentException("argument \"" + arg + "\": expected --NAME=value");
            }
            variables.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return variables;
    }

    /**
     * {@return every variable {@code reader} asks for}, recorded from an environment with only {@code required}
     * set (the last alternative of the one setting that must be set), so that every alternative before it is
     * asked for too: what a chart may set for a service (the charts module's test checks its templates against it).
     */
    public static SortedSet<String> namesRead(String required, Consumer<Map<String, String>> reader) {
        SortedSet<String> asked = new TreeSet<>();
        reader.accept(new AbstractMap<>() {
            @Override
            public Set<Entry<String, String>> entrySet() {
                return Set.of();
            }

            @Override
            public String get(Object name) {
                asked.add((String) name);
                return required.equals(name) ? "variables-read" : null;
            }
        });
        return Collections.unmodifiableSortedSet(asked);
    }
}
