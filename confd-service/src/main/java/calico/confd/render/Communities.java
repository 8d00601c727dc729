package calico.confd.render;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** BGP community literals ({@code aa:nn} standard, {@code aa:nn:mm} large) in BIRD's syntax. */
final class Communities {

    private static final Pattern STANDARD = Pattern.compile("(\\d{1,5}):(\\d{1,5})");
    private static final Pattern LARGE = Pattern.compile("(\\d{1,10}):(\\d{1,10}):(\\d{1,10})");

    private Communities() {
    }

    /** {@return a statement adding the community to the route} */
    static String add(String value, String field) {
        Matcher l = LARGE.matcher(value);
        if (l.matches()) {
            return "bgp_large_community.add(" + large(l, value, field) + ");";
        }
        return "bgp_community.add(" + standard(value, field) + ");";
    }

    /** {@return a condition: the route carries the community} */
    static String match(String value, String field) {
        Matcher l = LARGE.matcher(value);
        if (l.matches()) {
            return large(l, value, field) + " ~ bgp_large_community";
        }
        return standard(value, field) + " ~ bgp_community";
    }

    private static String standard(String value, String field) {
        Matcher m = STANDARD.matcher(value == null ? "" : value);
        if (!m.matches() || Long.parseLong(m.group(1)) > 0xFFFF || Long.parseLong(m.group(2)) > 0xFFFF) {
            throw new IllegalArgumentException(field + ": \"" + value + "\" is not a community aa:nn (0-65535 each)"
                    + " or aa:nn:mm (0-4294967295 each)");
        }
        return "(" + m.group(1) + "," + m.group(2) + ")";
    }

    private static String large(Matcher m, String value, String field) {
        for (int i = 1; i <= 3; i++) {
            if (Long.parseLong(m.group(i)) > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException(field + ": \"" + value + "\" has a part over 4294967295");
            }
        }
        return "(" + m.group(1) + "," + m.group(2) + "," + m.group(3) + ")";
    }
}
