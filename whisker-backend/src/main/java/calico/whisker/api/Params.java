package calico.whisker.api;

import java.util.Map;
import java.util.stream.Collectors;

/** Strict parsing of single query parameters; every failure is a {@link BadRequest} naming the parameter. */
final class Params {

    private Params() {
    }

    /** Seconds: > 0 absolute, < 0 relative to now, 0 (or absent) goldmane's default. */
    static long time(String name, String v) {
        if (v == null || v.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new BadRequest(name, "'" + v + "' is not an integer number of seconds");
        }
    }

    static long atLeast(String name, String v, long dflt, long min) {
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new BadRequest(name, "'" + v + "' is not an integer");
        }
        if (n < min) {
            throw new BadRequest(name, n + " is less than " + min);
        }
        return n;
    }

    static boolean bool(String name, String v) {
        if (v == null || v.isEmpty() || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw new BadRequest(name, "'" + v + "' is not true or false");
    }

    /** An enumerated value by its API name (case-sensitive, as documented). */
    static <E> E oneOf(String name, String v, Map<String, E> values, E dflt) {
        if (v == null || v.isEmpty()) {
            if (dflt == null) {
                throw new BadRequest(name, "required, one of " + names(values));
            }
            return dflt;
        }
        E e = values.get(v);
        if (e == null) {
            throw new BadRequest(name, "'" + v + "' is not one of " + names(values));
        }
        return e;
    }

    static String names(Map<String, ?> values) {
        return values.keySet().stream().sorted().collect(Collectors.joining(", "));
    }

    static void absent(String name, String v, String why) {
        if (v != null) {
            throw new BadRequest(name, why);
        }
    }
}
