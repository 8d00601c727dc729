package calico.api.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;
import java.util.Map;

/**
 * An IP protocol as Calico writes it: a name ({@code TCP}, {@code UDP}, {@code ICMP},
 * {@code ICMPv6}, {@code SCTP}, {@code UDPLite}) or a number 0-255. Serialised in the form given.
 *
 * @param name   the protocol name as written, or {@code null} when given as a number
 * @param number the protocol number as written, or {@code null} when given as a name
 */
public record Protocol(String name, Integer number) {

    private static final Map<String, Integer> NUMBERS = Map.of(
            "tcp", 6, "udp", 17, "icmp", 1, "icmpv6", 58, "sctp", 132, "udplite", 136);

    public static final Protocol TCP = new Protocol("TCP", null);
    public static final Protocol UDP = new Protocol("UDP", null);
    public static final Protocol SCTP = new Protocol("SCTP", null);
    public static final Protocol ICMP = new Protocol("ICMP", null);
    public static final Protocol ICMPV6 = new Protocol("ICMPv6", null);

    @JsonCreator
    public static Protocol parse(Object value) {
        if (value instanceof Number n) {
            return new Protocol(null, n.intValue());
        }
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("protocol must be a name or a number");
        }
        String t = s.trim();
        if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
            return new Protocol(null, Integer.parseInt(t));
        }
        return new Protocol(t, null);
    }

    public static Protocol of(String name) {
        return new Protocol(name, null);
    }

    public static Protocol of(int number) {
        return new Protocol(null, number);
    }

    /** {@return whether the name is one Calico knows}; numbers are always known. */
    public boolean isKnown() {
        return number != null || NUMBERS.containsKey(name.toLowerCase(Locale.ROOT));
    }

    /** {@return the protocol number}, or -1 for an unknown name. */
    public int toNumber() {
        if (number != null) {
            return number;
        }
        return NUMBERS.getOrDefault(name.toLowerCase(Locale.ROOT), -1);
    }

    /** {@return whether ports may be matched with this protocol}: TCP, UDP and SCTP only. */
    public boolean supportsPorts() {
        int n = toNumber();
        return n == 6 || n == 17 || n == 132;
    }

    /** {@return whether this is ICMP or ICMPv6}. */
    public boolean isIcmp() {
        int n = toNumber();
        return n == 1 || n == 58;
    }

    @JsonValue
    public Object toJson() {
        return name != null ? name : number;
    }

    @Override
    public String toString() {
        return String.valueOf(toJson());
    }
}
