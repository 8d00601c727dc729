package calico.api.validation;

import java.util.regex.Pattern;

/** BGP community values: standard {@code aa:nn} (16-bit parts) or large {@code aa:nn:mm} (32-bit parts). */
final class Communities {

    private static final Pattern STANDARD = Pattern.compile("(\\d+):(\\d+)");
    private static final Pattern LARGE = Pattern.compile("(\\d+):(\\d+):(\\d+)");

    private Communities() {
    }

    /** {@return whether the text has a community's shape (values may still be out of range)} */
    static boolean looksLikeCommunity(String v) {
        return v != null && (STANDARD.matcher(v).matches() || LARGE.matcher(v).matches());
    }

    /** {@return null when valid, else the reason} */
    static String check(String v) {
        if (v == null || v.isEmpty()) {
            return "community value must not be empty";
        }
        boolean large = LARGE.matcher(v).matches();
        if (!large && !STANDARD.matcher(v).matches()) {
            return "invalid community \"" + v + "\": use aa:nn (standard) or aa:nn:mm (large)";
        }
        long max = large ? 0xFFFF_FFFFL : 0xFFFFL;
        for (String part : v.split(":")) {
            if (part.length() > 10 || Long.parseLong(part) > max) {
                return "invalid community \"" + v + "\": each part of a " + (large ? "large" : "standard")
                        + " community must be at most " + max;
            }
        }
        return null;
    }
}
