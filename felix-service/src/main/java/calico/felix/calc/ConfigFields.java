package calico.felix.calc;

import calico.api.model.FelixConfigurationEnums;
import calico.api.model.FelixConfigurationSpec;
import calico.api.model.FelixConfigurationSpec.BPFConntrackTimeouts;
import calico.api.model.FelixConfigurationSpec.HealthTimeoutOverride;
import calico.api.model.FelixConfigurationSpec.ProtoPort;
import calico.api.model.FelixConfigurationSpec.RouteTableRange;
import calico.api.model.Port;
import calico.api.net.Cidr;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The catalogue of Felix settings (one per {@link FelixConfigurationSpec} field) and the one
 * text form each is carried in: how a resource field is printed, how an environment value is
 * read, and what is refused. Every source goes through {@link #normalize}, so a value that
 * reaches the resolved map is always one {@link FelixSettings} can parse.
 */
final class ConfigFields {

    private ConfigFields() {
    }

    /** The shape of a field's value, from its Java type plus the duration and enum tables. */
    enum Shape {
        BOOL, INT, MARK, DURATION, ENUM, TEXT, INTERFACE_PREFIXES, PROTO_PORTS, PORT_RANGE, PORT_RANGES, TEXT_LIST, KEY_VALUES,
        ROUTE_TABLE_RANGE, ROUTE_TABLE_RANGES, DURATION_KEY_VALUES,
        /** A regular expression ({@code *IfacePattern}): refused when it does not compile. */
        REGEX
    }

    /** Every spec field by its JSON name, in declaration order. */
    static final Map<String, RecordComponent> COMPONENTS = components();

    /** Shape of every spec field. */
    static final Map<String, Shape> SHAPES = shapes();

    /** The names emitted in a ConfigUpdate: every field except the superseded integer ones. */
    static final List<String> EMITTED = COMPONENTS.keySet().stream()
            .filter(n -> !FelixDefaults.SUPERSEDED.containsKey(n)).toList();

    /**
     * Calico's environment variable names that are not "FELIX_" + the upper-cased field name;
     * from Felix's own parameter names (e.g. {@code IpInIpEnabled}).
     */
    static final Map<String, String> ENV_ALIASES = Map.of(
            "FELIX_IPINIPENABLED", "ipipEnabled",
            "FELIX_IPINIPMTU", "ipipMTU",
            "FELIX_NETLINKTIMEOUTSECS", "netlinkTimeout",
            "FELIX_EXTERNALNODESCIDRLIST", "externalNodesList",
            "FELIX_ENDPOINTREPORTINGDELAYSECS", "endpointReportingDelay",
            "FELIX_USAGEREPORTINGINITIALDELAYSECS", "usageReportingInitialDelay",
            "FELIX_USAGEREPORTINGINTERVALSECS", "usageReportingInterval",
            "FELIX_WIREGUARDPERSISTENTKEEPALIVE", "wireguardKeepAlive");

    private static final Map<String, String> BY_ENV_NAME = COMPONENTS.keySet().stream()
            .collect(Collectors.toUnmodifiableMap(n -> "FELIX_" + n.toUpperCase(Locale.ROOT), n -> n));

    private static final Pattern GO_DURATION =
            Pattern.compile("[-+]?(0|((\\d+(\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h))+)");
    private static final Pattern INTERFACE_PREFIX = Pattern.compile("[a-zA-Z0-9_-]{1,15}");
    private static final Pattern SECONDS = Pattern.compile("\\d+(\\.\\d+)?");

    /** {@return the field an environment variable sets}, or {@code null} when it is not a FelixConfiguration field. */
    static String fieldForEnv(String variable) {
        String upper = variable.toUpperCase(Locale.ROOT);
        String f = BY_ENV_NAME.get(upper);
        return f != null ? f : ENV_ALIASES.get(upper);
    }

    /**
     * Reads one source's text values into normalized values keyed by emitted field name;
     * superseded integer fields fill their duration field when that is unset in the same source.
     *
     * @param raw      field name to text, as given by the source
     * @param problems receives one message per refused value, naming {@code describe(field)}
     */
    static Map<String, String> layer(Map<String, String> raw, java.util.function.Function<String, String> describe,
                                     List<String> problems) {
        Map<String, String> out = new TreeMap<>();
        Map<String, String> older = new TreeMap<>();
        raw.forEach((field, text) -> {
            if (text == null || text.isBlank()) {
                return; // as in Felix: empty is unset; "none" is how a list default is switched off
            }
            try {
                String v = normalize(field, text);
                FelixDefaults.Superseded s = FelixDefaults.SUPERSEDED.get(field);
                if (s != null) {
                    older.put(s.newField(), v + s.unit());
                } else {
                    out.put(field, v);
                }
            } catch (IllegalArgumentException e) {
                problems.add(describe.apply(field) + ": " + e.getMessage());
            }
        });
        older.forEach(out::putIfAbsent);
        return out;
    }

    /** {@return the set fields of a resource's spec, printed}; empty lists and maps count as unset. */
    static Map<String, String> print(FelixConfigurationSpec spec) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, RecordComponent> e : COMPONENTS.entrySet()) {
            Object v;
            try {
                v = e.getValue().getAccessor().invoke(spec);
            } catch (ReflectiveOperationException ex) {
                throw new IllegalStateException("cannot read " + e.getKey(), ex);
            }
            String text = printValue(v);
            if (text != null) {
                out.put(e.getKey(), text);
            }
        }
        return out;
    }

    private static String printValue(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof Collection<?> c) {
            return c.isEmpty() ? null : c.stream().map(ConfigFields::printElement).collect(Collectors.joining(","));
        }
        if (v instanceof Map<?, ?> m) {
            return m.isEmpty() ? null : new TreeMap<>(m).entrySet().stream()
                    .map(x -> x.getKey() + "=" + x.getValue()).collect(Collectors.joining(","));
        }
        if (v instanceof BPFConntrackTimeouts t) {
            Map<String, String> kv = new TreeMap<>();
            for (RecordComponent rc : BPFConntrackTimeouts.class.getRecordComponents()) {
                try {
                    Object x = rc.getAccessor().invoke(t);
                    if (x != null) {
                        kv.put(rc.getName(), x.toString());
                    }
                } catch (ReflectiveOperationException ex) {
                    throw new IllegalStateException(ex);
                }
            }
            return kv.isEmpty() ? null : printValue(kv);
        }
        return printElement(v);
    }

    private static String printElement(Object v) {
        if (v instanceof ProtoPort p) {
            String proto = p.protocol() == null ? "tcp" : p.protocol();
            String port = p.port() == null ? "" : p.port().toString();
            if (p.net() == null || p.net().isEmpty()) {
                return proto + ":" + port;
            }
            String net = p.net().contains(":") ? "[" + p.net() + "]" : p.net();
            return proto + ":" + net + ":" + port;
        }
        if (v instanceof RouteTableRange r) {
            return r.min() + "-" + r.max();
        }
        if (v instanceof HealthTimeoutOverride h) {
            return h.name() + "=" + h.timeout();
        }
        return v.toString();
    }

    /**
     * {@return the value in its printed form}.
     *
     * @throws IllegalArgumentException saying why the text is not a valid value of the field
     */
    static String normalize(String field, String text) {
        Shape shape = SHAPES.get(field);
        if (shape == null) {
            throw new IllegalArgumentException("unknown setting");
        }
        String t = text == null ? "" : text.trim();
        switch (shape) {
            case BOOL:
                return parseBool(t);
            case INT: {
                int v = parseInt(t);
                if (isPort(field) && (v < 0 || v > 65535)) {
                    throw new IllegalArgumentException("\"" + t + "\" is not a port (0-65535)");
                }
                return Integer.toString(v);
            }
            case MARK:
                return String.format("0x%08x", parseMark(t));
            case DURATION:
                return parseDuration(t);
            case ENUM:
                return parseEnum(field, t);
            case TEXT:
                if (field.equals("interfaceExclude")) {
                    return parseInterfaceExclude(t);
                }
                return t;
            case REGEX:
                try {
                    java.util.regex.Pattern.compile(t);
                } catch (java.util.regex.PatternSyntaxException e) {
                    throw new IllegalArgumentException("\"" + t + "\" is not a regular expression: "
                            + e.getDescription() + " at index " + e.getIndex());
                }
                return t;
            case INTERFACE_PREFIXES:
                return parseInterfacePrefixes(t);
            case PROTO_PORTS:
                return parseProtoPorts(t).stream().map(ConfigFields::printElement).collect(Collectors.joining(","))
                        .transform(s -> s.isEmpty() ? "none" : s);
            case PORT_RANGE:
                return parsePortRange(t).toString();
            case PORT_RANGES:
                return splitList(t).stream().map(p -> parsePortRange(p).toString()).collect(Collectors.joining(","));
            case TEXT_LIST:
                if (field.equals("externalNodesList")) {
                    for (String c : splitList(t)) {
                        if (Cidr.tryParseCidrOrIp(c).isEmpty()) {
                            throw new IllegalArgumentException("\"" + c + "\" is not a CIDR or an IP address");
                        }
                    }
                }
                return String.join(",", splitList(t));
            case KEY_VALUES:
                return printValue(parseKeyValues(t, false));
            case DURATION_KEY_VALUES:
                return printValue(parseKeyValues(t, true));
            case ROUTE_TABLE_RANGE:
                return parseTableRange(t);
            case ROUTE_TABLE_RANGES:
                return splitList(t).stream().map(ConfigFields::parseTableRange).collect(Collectors.joining(","));
            default:
                throw new IllegalStateException("unhandled shape " + shape);
        }
    }

    static String parseBool(String t) {
        switch (t.toLowerCase(Locale.ROOT)) {
            case "true", "t", "yes", "y", "1":
                return "true";
            case "false", "f", "no", "n", "0":
                return "false";
            default:
                throw new IllegalArgumentException("\"" + t + "\" is not a boolean (true or false)");
        }
    }

    static int parseInt(String t) {
        try {
            return Integer.parseInt(t);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + t + "\" is not an integer");
        }
    }

    private static long parseMark(String t) {
        try {
            long v = t.startsWith("0x") || t.startsWith("0X") ? Long.parseLong(t.substring(2), 16) : Long.parseLong(t);
            if (v < 0 || v > 0xffffffffL) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + t + "\" is not a 32-bit mark mask");
        }
    }

    /** Calico's {@code iface-list}: one or more interface name prefixes, comma-separated. */
    private static String parseInterfacePrefixes(String t) {
        List<String> prefixes = splitList(t);
        if (prefixes.isEmpty()) {
            throw new IllegalArgumentException("\"" + t + "\" names no interface prefix");
        }
        for (String p : prefixes) {
            if (!INTERFACE_PREFIX.matcher(p).matches()) {
                throw new IllegalArgumentException("\"" + p + "\" is not an interface name prefix (1-15 letters, digits, "
                        + "'_' or '-')");
            }
        }
        return String.join(",", prefixes);
    }

    /** Go duration text is kept as written; a bare number (Felix's environment form) is seconds. */
    static String parseDuration(String t) {
        if (SECONDS.matcher(t).matches()) {
            return t + "s";
        }
        if (GO_DURATION.matcher(t).matches()) {
            return t;
        }
        throw new IllegalArgumentException("\"" + t + "\" is not a duration (e.g. 90s, 500ms, or seconds)");
    }

    /** Any case, as Calico's felix reads its environment; printed in the v3 spelling. */
    private static String parseEnum(String field, String t) {
        FelixConfigurationEnums.Allowed allowed = FelixConfigurationEnums.FIELDS.get(field);
        return allowed.canonical(t).orElseThrow(() -> new IllegalArgumentException("\"" + t + "\" is not one of "
                + String.join(", ", allowed.values())));
    }

    /** Entries {@code [proto:][net:]port}, comma-separated; an IPv6 net in brackets; "none" is the empty list. */
    static List<ProtoPort> parseProtoPorts(String t) {
        List<ProtoPort> out = new ArrayList<>();
        if (t.isEmpty() || t.equalsIgnoreCase("none")) {
            return out;
        }
        for (String entry : t.split(",")) {
            String e = entry.trim();
            String proto = "tcp";
            String net = null;
            int colon = e.indexOf(':');
            if (colon >= 0) {
                proto = e.substring(0, colon).toLowerCase(Locale.ROOT);
                e = e.substring(colon + 1);
            }
            if (!proto.equals("tcp") && !proto.equals("udp") && !proto.equals("sctp")) {
                throw new IllegalArgumentException("\"" + entry.trim() + "\" has protocol \"" + proto
                        + "\" (expected tcp, udp or sctp)");
            }
            if (e.startsWith("[")) {
                int close = e.indexOf("]:");
                if (close < 0) {
                    throw new IllegalArgumentException("\"" + entry.trim() + "\" has an unclosed [net]");
                }
                net = e.substring(1, close);
                e = e.substring(close + 2);
            } else if (e.lastIndexOf(':') >= 0) {
                net = e.substring(0, e.lastIndexOf(':'));
                e = e.substring(e.lastIndexOf(':') + 1);
            }
            if (net != null && Cidr.tryParseCidrOrIp(net).isEmpty()) {
                throw new IllegalArgumentException("\"" + entry.trim() + "\" has an invalid net \"" + net + "\"");
            }
            int port;
            try {
                port = Integer.parseInt(e);
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("\"" + entry.trim() + "\" has an invalid port \"" + e + "\"");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("\"" + entry.trim() + "\" has a port outside 0-65535");
            }
            out.add(new ProtoPort(proto, port, net));
        }
        return out;
    }

    private static Port parsePortRange(String t) {
        Port p;
        try {
            p = Port.parse(t);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("\"" + t + "\" is not a port or range min:max");
        }
        if (p.isNamed() || p.minPort() < 0 || p.maxPort() > 65535 || p.minPort() > p.maxPort()) {
            throw new IllegalArgumentException("\"" + t + "\" is not a port or range min:max within 0-65535");
        }
        return p;
    }

    private static String parseTableRange(String t) {
        int dash = t.indexOf('-');
        if (dash <= 0) {
            throw new IllegalArgumentException("\"" + t + "\" is not a table range min-max");
        }
        int min = parseInt(t.substring(0, dash).trim());
        int max = parseInt(t.substring(dash + 1).trim());
        if (min < 0 || min > max) {
            throw new IllegalArgumentException("\"" + t + "\" is not a table range min-max with min <= max");
        }
        return min + "-" + max;
    }

    /** {@return the non-blank, trimmed entries of a comma-separated list} */
    /** {@code interfaceExclude}: names, or regular expressions between slashes, each of which must compile. */
    static String parseInterfaceExclude(String t) {
        List<String> entries = splitList(t);
        for (String e : entries) {
            if (e.length() > 1 && e.startsWith("/") && e.endsWith("/")) {
                try {
                    java.util.regex.Pattern.compile(e.substring(1, e.length() - 1));
                } catch (java.util.regex.PatternSyntaxException x) {
                    throw new IllegalArgumentException("\"" + e + "\" is not a regular expression: "
                            + x.getDescription() + " at index " + x.getIndex());
                }
            }
        }
        return String.join(",", entries);
    }

    static List<String> splitList(String t) {
        List<String> out = new ArrayList<>();
        for (String s : t.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    private static Map<String, String> parseKeyValues(String t, boolean durations) {
        Map<String, String> out = new TreeMap<>();
        for (String s : splitList(t)) {
            int eq = s.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("\"" + s + "\" is not key=value");
            }
            String v = s.substring(eq + 1).trim();
            if (durations && v.startsWith("-")) {
                throw new IllegalArgumentException("\"" + s + "\": a timeout must not be negative");
            }
            // Calico lets the TCP FIN timeout be "Auto".
            out.put(s.substring(0, eq).trim(), durations && !v.equalsIgnoreCase("auto") ? parseDuration(v) : v);
        }
        return out;
    }

    private static boolean isPort(String field) {
        return field.endsWith("Port") || field.endsWith("PortV6");
    }

    private static Map<String, RecordComponent> components() {
        Map<String, RecordComponent> m = new LinkedHashMap<>();
        for (RecordComponent rc : FelixConfigurationSpec.class.getRecordComponents()) {
            m.put(rc.getName(), rc);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    private static Map<String, Shape> shapes() {
        Map<String, Shape> m = new LinkedHashMap<>();
        COMPONENTS.forEach((name, rc) -> m.put(name, shapeOf(name, rc)));
        return java.util.Collections.unmodifiableMap(m);
    }

    private static Shape shapeOf(String name, RecordComponent rc) {
        Class<?> type = rc.getType();
        if (type == Boolean.class) {
            return Shape.BOOL;
        }
        if (type == Integer.class) {
            return Shape.INT;
        }
        if (type == Long.class) {
            return Shape.MARK;
        }
        if (type == Port.class) {
            return Shape.PORT_RANGE;
        }
        if (type == RouteTableRange.class) {
            return Shape.ROUTE_TABLE_RANGE;
        }
        if (type == BPFConntrackTimeouts.class) {
            return Shape.DURATION_KEY_VALUES;
        }
        if (type == Map.class) {
            return Shape.KEY_VALUES;
        }
        if (type == List.class) {
            Type element = ((ParameterizedType) rc.getGenericType()).getActualTypeArguments()[0];
            if (element == ProtoPort.class) {
                return Shape.PROTO_PORTS;
            }
            if (element == Port.class) {
                return Shape.PORT_RANGES;
            }
            if (element == RouteTableRange.class) {
                return Shape.ROUTE_TABLE_RANGES;
            }
            if (element == HealthTimeoutOverride.class) {
                return Shape.DURATION_KEY_VALUES;
            }
            return Shape.TEXT_LIST;
        }
        if (type == String.class) {
            if (name.equals("interfacePrefix")) {
                return Shape.INTERFACE_PREFIXES;
            }
            if (FelixConfigurationSpec.DURATION_FIELDS.contains(name)) {
                return Shape.DURATION;
            }
            if (name.endsWith("IfacePattern")) {
                return Shape.REGEX;
            }
            return FelixConfigurationEnums.FIELDS.containsKey(name) ? Shape.ENUM : Shape.TEXT;
        }
        throw new IllegalStateException("FelixConfigurationSpec." + name + " has a type the resolver does not know: "
                + type.getName());
    }
}
