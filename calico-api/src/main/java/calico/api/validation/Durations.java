package calico.api.validation;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;
import java.util.Optional;

/**
 * Go duration strings ({@code time.ParseDuration}), which Calico uses for every duration
 * field: a sequence of decimal numbers, each with a unit, e.g. {@code 90s}, {@code 1m30s},
 * {@code 1.5h}, {@code 500ms}, with an optional sign; {@code 0} needs no unit.
 */
public final class Durations {

    private static final BigInteger MAX_NANOS = BigInteger.valueOf(Long.MAX_VALUE);
    private static final Map<String, Long> UNITS = Map.of(
            "ns", 1L, "us", 1_000L, "\u00b5s", 1_000L, "\u03bcs", 1_000L, "ms", 1_000_000L,
            "s", 1_000_000_000L, "m", 60_000_000_000L, "h", 3_600_000_000_000L);

    private Durations() {
    }

    /** {@return the Go duration {@code text}}, or empty when it is not one (the controllers read their periods so). */
    public static Optional<java.time.Duration> parse(String text) {
        return parseNanos(text).map(java.time.Duration::ofNanos);
    }

    /**
     * {@return {@code d} as Go's {@code Duration.String} writes it} ({@code 15m0s}, {@code 1h0m0s},
     * {@code 1.5s}, {@code 500ms}, {@code 0s}), the form Calico's status fields hold.
     */
    public static String format(java.time.Duration d) {
        long nanos = d.toNanos();
        if (nanos == 0) {
            return "0s";
        }
        String sign = nanos < 0 ? "-" : "";
        long n = Math.abs(nanos);
        if (n < 1_000L) {
            return sign + n + "ns";
        }
        if (n < 1_000_000L) {
            return sign + fraction(n, 1_000L) + "us";
        }
        if (n < 1_000_000_000L) {
            return sign + fraction(n, 1_000_000L) + "ms";
        }
        long hours = n / 3_600_000_000_000L;
        long minutes = n / 60_000_000_000L % 60;
        String seconds = fraction(n % 60_000_000_000L, 1_000_000_000L) + "s";
        if (hours > 0) {
            return sign + hours + "h" + minutes + "m" + seconds;
        }
        return sign + (minutes > 0 ? minutes + "m" : "") + seconds;
    }

    /** {@code value / unit} as a decimal without trailing zeros. */
    private static String fraction(long value, long unit) {
        return new BigDecimal(value).divide(BigDecimal.valueOf(unit)).stripTrailingZeros().toPlainString();
    }

    /** {@return the duration in nanoseconds}, or empty when it is not a Go duration. */
    static Optional<Long> parseNanos(String text) {
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        int i = 0;
        boolean negative = false;
        if (text.charAt(0) == '-' || text.charAt(0) == '+') {
            negative = text.charAt(0) == '-';
            i++;
        }
        if (text.substring(i).equals("0")) {
            return Optional.of(0L);
        }
        if (i == text.length()) {
            return Optional.empty();
        }
        BigDecimal total = BigDecimal.ZERO;
        while (i < text.length()) {
            int start = i;
            while (i < text.length() && (Character.isDigit(text.charAt(i)) || text.charAt(i) == '.')) {
                i++;
            }
            String number = text.substring(start, i);
            if (number.isEmpty() || number.equals(".") || number.indexOf('.') != number.lastIndexOf('.')
                    || !number.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
                return Optional.empty();
            }
            int unitStart = i;
            while (i < text.length() && !Character.isDigit(text.charAt(i)) && text.charAt(i) != '.') {
                i++;
            }
            Long unit = UNITS.get(text.substring(unitStart, i));
            if (unit == null) {
                return Optional.empty();
            }
            total = total.add(new BigDecimal(number.startsWith(".") ? "0" + number : number)
                    .multiply(BigDecimal.valueOf(unit)));
            if (total.toBigInteger().compareTo(MAX_NANOS) > 0) {
                return Optional.empty();
            }
        }
        long nanos = total.toBigInteger().longValue();
        return Optional.of(negative ? -nanos : nanos);
    }

    /** Checks an optional duration field that must not be negative. */
    static void checkNonNegative(String value, FieldPath path, Errors errors) {
        if (value == null) {
            return;
        }
        Optional<Long> nanos = parseNanos(value);
        if (nanos.isEmpty()) {
            errors.add(path, "invalid duration \"" + value + "\": use Go duration syntax such as 90s, 1m30s or 500ms");
        } else if (nanos.get() < 0) {
            errors.add(path, "must not be negative");
        }
    }
}
