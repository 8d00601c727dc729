package calico.api.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.math.BigInteger;

/**
 * A BGP AS number as Calico accepts it: an integer 0..4294967295, a string of digits, or the
 * dotted "asdot" form {@code "x.y"} (x and y 0..65535, value {@code x*65536 + y}). Malformed
 * values are rejected when parsed, as Calico rejects them when it decodes JSON.
 *
 * <p>Always written as a plain number, as Calico writes it: {@code "1.10"} reads as 65546 and
 * writes back as {@code 65546}. (Keeping the dotted text would also be unsafe in YAML, where
 * an unquoted {@code 1.10} is the float 1.1.)
 *
 * @param value the 32-bit AS number
 */
public record ASNumber(long value) {

    public static final long MAX = 0xFFFF_FFFFL;

    public ASNumber {
        if (value < 0 || value > MAX) {
            throw new IllegalArgumentException("AS number " + value + " is out of range 0-" + MAX);
        }
    }

    public static ASNumber of(long value) {
        return new ASNumber(value);
    }

    /** {@return the AS number {@code high.low}} in dotted notation. */
    public static ASNumber dotted(int high, int low) {
        if (high < 0 || high > 0xFFFF || low < 0 || low > 0xFFFF) {
            throw new IllegalArgumentException("dotted AS number parts must be 0-65535");
        }
        return new ASNumber(((long) high << 16) + low);
    }

    /** Parses the YAML/JSON form: an integer, a string of digits, or {@code "x.y"}. */
    @JsonCreator
    public static ASNumber parse(Object raw) {
        if (raw instanceof BigInteger b) {
            if (b.bitLength() > 63) {
                throw new IllegalArgumentException("AS number " + b + " is out of range 0-" + MAX);
            }
            return of(b.longValue());
        }
        if (raw instanceof Integer || raw instanceof Long || raw instanceof Short) {
            return of(((Number) raw).longValue());
        }
        if (!(raw instanceof String s)) {
            throw new IllegalArgumentException("AS number must be an integer or a string \"x.y\"");
        }
        if (isDigits(s)) {
            if (s.length() > 10 || Long.parseLong(s) > MAX) {
                throw new IllegalArgumentException("AS number \"" + s + "\" is out of range 0-" + MAX);
            }
            return of(Long.parseLong(s));
        }
        int dot = s.indexOf('.');
        if (dot > 0 && isDigits(s.substring(0, dot)) && isDigits(s.substring(dot + 1))) {
            return dotted(part(s, s.substring(0, dot)), part(s, s.substring(dot + 1)));
        }
        throw new IllegalArgumentException("invalid AS number format \"" + s + "\"");
    }

    private static int part(String whole, String part) {
        if (part.length() > 5 || Integer.parseInt(part) > 0xFFFF) {
            throw new IllegalArgumentException("invalid AS number format \"" + whole + "\": parts must be 0-65535");
        }
        return Integer.parseInt(part);
    }

    private static boolean isDigits(String s) {
        return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** {@return the high 16 bits}, the part before the dot in dotted notation. */
    public int high() {
        return (int) (value >>> 16);
    }

    /** {@return the low 16 bits}, the part after the dot in dotted notation. */
    public int low() {
        return (int) (value & 0xFFFF);
    }

    /** {@return the number in dotted notation}, e.g. {@code "1.10"}, for display. */
    public String toDotted() {
        return high() + "." + low();
    }

    @JsonValue
    public long toJson() {
        return value;
    }

    @Override
    public String toString() {
        return Long.toString(value);
    }
}
