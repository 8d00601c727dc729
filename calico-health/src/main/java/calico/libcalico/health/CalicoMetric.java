package calico.libcalico.health;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One metric as Calico names it (name, Prometheus type, labels), and either what this component serves
 * under that name ({@code ours}: how it is measured, and our own names kept beside it) or why it is missing.
 *
 * @param missing empty when served; otherwise the reason we cannot measure it
 */
public record CalicoMetric(String name, Type type, List<String> labels, String ours, String missing) {

    /** The {@code # TYPE} of a metric family in Prometheus' text format. */
    public enum Type {
        COUNTER, GAUGE, SUMMARY, HISTOGRAM;

        /** {@return the word in the {@code # TYPE} line} */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public CalicoMetric {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        labels = List.copyOf(labels);
        ours = ours == null ? "" : ours;
        missing = missing == null ? "" : missing;
        if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
            throw new IllegalArgumentException("metric " + name + ": not a Prometheus metric name");
        }
        if (ours.isEmpty() == missing.isEmpty()) {
            throw new IllegalArgumentException("metric " + name + ": either served (how it is measured) or missing (why)");
        }
    }

    /**
     * A metric this component serves under Calico's name.
     *
     * @param labels comma-separated label names, empty for none
     * @param ours   what is measured, and our own names beside it
     */
    public static CalicoMetric served(String name, Type type, String labels, String ours) {
        return new CalicoMetric(name, type, split(labels), ours, "");
    }

    /** A metric of Calico's this component does not serve, and why. */
    public static CalicoMetric missing(String name, Type type, String labels, String reason) {
        return new CalicoMetric(name, type, split(labels), "", reason);
    }

    public boolean isServed() {
        return missing.isEmpty();
    }

    private static List<String> split(String labels) {
        return labels == null || labels.isBlank() ? List.of()
                : Arrays.stream(labels.split(",")).map(String::trim).toList();
    }
}
