package calico.libcalico.health;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A component's metrics as Calico names them: the one list its DESIGN.md table is printed from
 * ({@link #markdown()}), its Calico metrics port renames counters by ({@link #exposition(String)}), and
 * its tests check a scrape against ({@link #problemsIn(String)}).
 *
 * <p>Why the renaming: Micrometer's Prometheus registry always ends a counter's samples in {@code _total},
 * while most of Calico's counters have no such suffix ({@code typha_connections_accepted}), and dashboards
 * query the bare name. On the Calico port each counter of this table whose name does not end in
 * {@code _total} is served under that bare name; {@code /actuator/prometheus} keeps Micrometer's names.
 */
public final class CalicoMetricTable {

    private static final String TOTAL = "_total";

    private final List<CalicoMetric> rows;
    private final Set<String> bareCounters;

    private CalicoMetricTable(List<CalicoMetric> rows) {
        Map<String, CalicoMetric> byName = new LinkedHashMap<>();
        for (CalicoMetric m : rows) {
            if (byName.put(m.name(), m) != null) {
                throw new IllegalArgumentException("metric " + m.name() + " is listed twice");
            }
        }
        this.rows = List.copyOf(rows);
        this.bareCounters = rows.stream()
                .filter(m -> m.isServed() && m.type() == CalicoMetric.Type.COUNTER && !m.name().endsWith(TOTAL))
                .map(CalicoMetric::name).collect(Collectors.toUnmodifiableSet());
    }

    public static CalicoMetricTable of(CalicoMetric... rows) {
        return new CalicoMetricTable(List.of(rows));
    }

    /** An empty table: the exposition is served unchanged. */
    public static CalicoMetricTable none() {
        return new CalicoMetricTable(List.of());
    }

    public List<CalicoMetric> rows() {
        return rows;
    }

    public List<CalicoMetric> served() {
        return rows.stream().filter(CalicoMetric::isServed).toList();
    }

    /** {@return the counters served under a name without {@code _total}} */
    public Set<String> bareCounters() {
        return bareCounters;
    }

    /** {@return the table as DESIGN.md prints it: one row per Calico metric} */
    public String markdown() {
        StringBuilder b = new StringBuilder("| Calico metric | Type | Labels | Here |\n| --- | --- | --- | --- |\n");
        for (CalicoMetric m : rows) {
            b.append("| `").append(m.name()).append("` | ").append(m.type().text()).append(" | ")
                    .append(m.labels().stream().map(l -> "`" + l + "`").collect(Collectors.joining(", ")))
                    .append(" | ").append(m.isServed() ? m.ours() : "**missing**: " + m.missing()).append(" |\n");
        }
        return b.toString();
    }

    /**
     * {@return Micrometer's text exposition with this table's bare counters renamed}: their
     * {@code # HELP}, {@code # TYPE} and sample lines lose the {@code _total} Micrometer added.
     */
    public String exposition(String scrape) {
        if (bareCounters.isEmpty()) {
            return scrape;
        }
        StringBuilder out = new StringBuilder(scrape.length());
        for (String line : scrape.split("\n", -1)) {
            int start = line.startsWith("# HELP ") || line.startsWith("# TYPE ") ? 7 : line.startsWith("#") ? -1 : 0;
            if (start >= 0) {
                int end = nameEnd(line, start);
                String name = line.substring(start, end);
                if (name.endsWith(TOTAL) && bareCounters.contains(name.substring(0, name.length() - TOTAL.length()))) {
                    line = line.substring(0, end - TOTAL.length()) + line.substring(end);
                }
            }
            out.append(line).append('\n');
        }
        out.setLength(out.length() - 1);
        return out.toString();
    }

    /**
     * {@return what a scrape of the Calico port lacks}: for each served metric, its {@code # TYPE} line
     * with Calico's type, and a sample carrying each of its labels. Empty when the scrape is complete.
     */
    public List<String> problemsIn(String exposition) {
        Map<String, String> types = new HashMap<>();
        Map<String, List<String>> samples = new HashMap<>();
        for (String line : exposition.split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.substring(7).trim().split(" +");
                if (parts.length == 2) {
                    types.put(parts[0], parts[1]);
                }
            } else if (!line.isBlank() && !line.startsWith("#")) {
                samples.computeIfAbsent(line.substring(0, nameEnd(line, 0)), k -> new ArrayList<>()).add(line);
            }
        }
        List<String> problems = new ArrayList<>();
        for (CalicoMetric m : served()) {
            String type = types.get(m.name());
            if (type == null) {
                problems.add(m.name() + ": no # TYPE line");
                continue;
            }
            if (!type.equals(m.type().text())) {
                problems.add(m.name() + ": # TYPE " + type + ", Calico's is " + m.type().text());
            }
            List<String> lines = new ArrayList<>();
            for (String suffix : List.of("", "_count", "_sum", "_bucket")) {
                lines.addAll(samples.getOrDefault(m.name() + suffix, List.of()));
            }
            if (lines.isEmpty()) {
                problems.add(m.name() + ": no sample");
            } else if (lines.stream().noneMatch(l -> m.labels().stream().allMatch(label -> hasLabel(l, label)))) {
                problems.add(m.name() + ": no sample with the labels " + m.labels() + ", e.g. " + lines.get(0));
            }
        }
        return problems;
    }

    private static boolean hasLabel(String sample, String label) {
        int open = sample.indexOf('{');
        return open >= 0 && (sample.startsWith(label + "=\"", open + 1) || sample.indexOf("," + label + "=\"", open) >= 0);
    }

    private static int nameEnd(String line, int from) {
        int i = from;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        return i;
    }
}
