package calico.api.validation;

import java.util.regex.Pattern;

/**
 * Kubernetes and Calico name formats. Each check returns {@code null} when the value is
 * valid, or the reason it is not, so callers attach the reason to their own field path.
 */
final class Names {

    static final int LABEL_MAX = 63;
    static final int SUBDOMAIN_MAX = 253;

    private static final String LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
    private static final Pattern DNS_LABEL = Pattern.compile(LABEL);
    private static final Pattern DNS_SUBDOMAIN = Pattern.compile(LABEL + "(\\." + LABEL + ")*");
    private static final Pattern QUALIFIED_NAME_PART = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern CONTAINER_ID = Pattern.compile("[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?");
    private static final Pattern INTERFACE = Pattern.compile("[a-zA-Z0-9_.-]{1,15}");
    private static final Pattern PORT_NAME = Pattern.compile("[-a-z0-9]+");

    private Names() {
    }

    /** Most resource names: a DNS-1123 subdomain of at most 253 characters. */
    static String dnsSubdomain(String s) {
        if (s == null || s.isEmpty()) {
            return "must not be empty";
        }
        if (s.length() > SUBDOMAIN_MAX) {
            return "must be at most " + SUBDOMAIN_MAX + " characters (is " + s.length() + ")";
        }
        if (!DNS_SUBDOMAIN.matcher(s).matches()) {
            return "must consist of lower case alphanumeric characters, '-' or '.', and start and end with"
                    + " an alphanumeric character";
        }
        return null;
    }

    /** Namespaces and tiers: a DNS-1123 label of at most 63 characters (no dots). */
    static String dnsLabel(String s) {
        if (s == null || s.isEmpty()) {
            return "must not be empty";
        }
        if (s.length() > LABEL_MAX) {
            return "must be at most " + LABEL_MAX + " characters (is " + s.length() + ")";
        }
        if (!DNS_LABEL.matcher(s).matches()) {
            return "must consist of lower case alphanumeric characters or '-', and start and end with"
                    + " an alphanumeric character";
        }
        return null;
    }

    /** {@return whether the text is one DNS-1123 label} */
    static boolean isDnsLabel(String s) {
        return s != null && !s.isEmpty() && s.length() <= LABEL_MAX && DNS_LABEL.matcher(s).matches();
    }

    /** Label and annotation keys: an optional DNS subdomain prefix and '/', then a name of at most 63. */
    static String qualifiedName(String key) {
        if (key == null || key.isEmpty()) {
            return "key must not be empty";
        }
        String name = key;
        int slash = key.indexOf('/');
        if (slash >= 0) {
            if (key.indexOf('/', slash + 1) >= 0) {
                return "key may contain at most one '/'";
            }
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            String bad = dnsSubdomain(prefix);
            if (bad != null) {
                return "key prefix \"" + prefix + "\" " + bad;
            }
        }
        if (name.isEmpty()) {
            return "key name part must not be empty";
        }
        if (name.length() > LABEL_MAX) {
            return "key name part must be at most " + LABEL_MAX + " characters";
        }
        if (!QUALIFIED_NAME_PART.matcher(name).matches()) {
            return "key name part must consist of alphanumeric characters, '-', '_' or '.', and start and end"
                    + " with an alphanumeric character";
        }
        return null;
    }

    /** Label values: empty, or at most 63 characters of the qualified-name alphabet. */
    static String labelValue(String v) {
        if (v == null || v.isEmpty()) {
            return null;
        }
        if (v.length() > LABEL_MAX) {
            return "value must be at most " + LABEL_MAX + " characters";
        }
        if (!QUALIFIED_NAME_PART.matcher(v).matches()) {
            return "value must consist of alphanumeric characters, '-', '_' or '.', and start and end with an"
                    + " alphanumeric character";
        }
        return null;
    }

    /** Named ports (IANA service names, as Kubernetes checks them). */
    static String portName(String s) {
        if (s == null || s.isEmpty()) {
            return "port name must not be empty";
        }
        if (s.length() > 15) {
            return "port name must be at most 15 characters";
        }
        if (!PORT_NAME.matcher(s).matches()) {
            return "port name must contain only lower case letters, digits and '-'";
        }
        if (s.chars().noneMatch(Character::isLetter)) {
            return "port name must contain at least one letter";
        }
        if (s.startsWith("-") || s.endsWith("-")) {
            return "port name must not begin or end with '-'";
        }
        if (s.contains("--")) {
            return "port name must not contain consecutive '-'";
        }
        return null;
    }

    static String containerId(String s) {
        return CONTAINER_ID.matcher(s).matches() ? null
                : "must consist of alphanumeric characters or '-', and start and end with an alphanumeric character";
    }

    /** Linux interface names; {@code *} (all interfaces) where the caller allows it. */
    static String interfaceName(String s, boolean wildcardAllowed) {
        if (wildcardAllowed && "*".equals(s)) {
            return null;
        }
        return INTERFACE.matcher(s).matches() ? null
                : "must be 1-15 characters of letters, digits, '_', '.' or '-'" + (wildcardAllowed ? ", or '*'" : "");
    }
}
