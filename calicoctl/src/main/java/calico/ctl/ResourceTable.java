package calico.ctl;

import calico.api.model.ResourceKind;
import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * {@code calicoctl get}'s tables ({@code -o ps}, {@code -o wide}, {@code -o custom-columns=A,B}) with Calico's
 * headings for each kind, read from the resource's JSON form.
 *
 * <p>Printed as Calico prints them (Go's tabwriter with padding 3 and minimum width 5): every cell,
 * the last one too, is padded, and a blank line follows the table. Values print as Go's templates
 * print them: an unset order is {@code <nil>}, an unset boolean {@code false}.
 */
final class ResourceTable {

    /** One column: its heading and how a resource's JSON form becomes its cell. */
    private record Column(String heading, Function<JsonNode, String> cell) {
    }

    /** A kind's columns, and which of them {@code ps} and {@code wide} show. */
    private record Layout(Map<String, Column> columns, List<String> ps, List<String> wide) {
    }

    private static final int PADDING = 3;
    private static final int MIN_WIDTH = 5;

    private final String defaultAsNumber;

    /** @param defaultAsNumber the cluster's AS number, shown in brackets for nodes that set none */
    ResourceTable(String defaultAsNumber) {
        this.defaultAsNumber = defaultAsNumber;
    }

    /**
     * {@return the table} of {@code items} (JSON forms of resources of {@code kind}).
     *
     * @param columns the headings of {@code custom-columns}, or null for {@code ps}/{@code wide}
     * @param withNamespace whether a namespaced kind gets a NAMESPACE column first (given {@code -n} or {@code -A})
     * @throws CommandLine.UsageException naming the valid headings when a custom column is unknown
     */
    String render(ResourceKind kind, List<JsonNode> items, boolean wide, List<String> columns, boolean withNamespace) {
        Layout layout = layout(kind);
        List<String> headings = new ArrayList<>();
        if (columns == null && withNamespace && kind.namespaced()) {
            headings.add("NAMESPACE");
        }
        headings.addAll(columns != null ? columns : wide ? layout.wide() : layout.ps());
        List<Column> chosen = new ArrayList<>();
        for (String h : headings) {
            Column c = layout.columns().get(h);
            if (c == null) {
                throw new CommandLine.UsageException("Unknown heading " + h + ", valid values are: "
                        + String.join(", ", layout.columns().keySet()));
            }
            chosen.add(c);
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(headings);
        for (JsonNode item : items) {
            rows.add(chosen.stream().map(c -> c.cell().apply(item)).toList());
        }
        return tabulate(rows) + "\n";
    }

    /** Go's tabwriter (minwidth 5, padding 3, spaces; every cell tab-terminated, so every cell padded). */
    private static String tabulate(List<List<String>> rows) {
        int n = rows.get(0).size();
        int[] width = new int[n];
        for (List<String> row : rows) {
            for (int c = 0; c < n; c++) {
                width[c] = Math.max(width[c], Math.max(row.get(c).length() + PADDING, MIN_WIDTH));
            }
        }
        StringBuilder sb = new StringBuilder();
        for (List<String> row : rows) {
            for (int c = 0; c < n; c++) {
                String v = row.get(c);
                sb.append(v).append(" ".repeat(width[c] - v.length()));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private Layout layout(ResourceKind kind) {
        Map<String, Column> cols = new LinkedHashMap<>();
        add(cols, "NAME", n -> text(n.path("metadata").path("name")));
        if (kind.namespaced()) {
            add(cols, "NAMESPACE", n -> text(n.path("metadata").path("namespace")));
        }
        JsonNodePath spec = new JsonNodePath("spec");
        return switch (kind) {
            case BGP_CONFIGURATION -> {
                add(cols, "LOGSEVERITY", spec.text("logSeverityScreen"));
                add(cols, "MESHENABLED", spec.textOr("nodeToNodeMeshEnabled", "-"));
                add(cols, "ASNUMBER", spec.textOr("asNumber", "-"));
                yield same(cols, "NAME", "LOGSEVERITY", "MESHENABLED", "ASNUMBER");
            }
            case BGP_FILTER -> {
                add(cols, "NUMEXPORT", n -> Integer.toString(spec.of(n).path("exportV4").size()
                        + spec.of(n).path("exportV6").size()));
                add(cols, "NUMIMPORT", n -> Integer.toString(spec.of(n).path("importV4").size()
                        + spec.of(n).path("importV6").size()));
                yield same(cols, "NAME", "NUMEXPORT", "NUMIMPORT");
            }
            case BGP_PEER -> {
                add(cols, "PEERIP", spec.text("peerIP"));
                add(cols, "NODE", n -> {
                    String node = text(spec.of(n).path("node"));
                    String selector = text(spec.of(n).path("nodeSelector"));
                    return !node.isEmpty() ? node : !selector.isEmpty() ? selector : "(global)";
                });
                add(cols, "ASN", spec.textOr("asNumber", "0"));
                yield same(cols, "NAME", "PEERIP", "NODE", "ASN");
            }
            case CLUSTER_INFORMATION -> {
                add(cols, "CLUSTERGUID", spec.text("clusterGUID"));
                add(cols, "CLUSTERTYPE", spec.text("clusterType"));
                add(cols, "CALICOVERSION", spec.text("calicoVersion"));
                add(cols, "DATASTOREREADY", spec.textOr("datastoreReady", "<nil>"));
                yield same(cols, "NAME", "CLUSTERGUID", "CLUSTERTYPE", "CALICOVERSION", "DATASTOREREADY");
            }
            case GLOBAL_NETWORK_POLICY, NETWORK_POLICY, STAGED_GLOBAL_NETWORK_POLICY, STAGED_NETWORK_POLICY -> {
                add(cols, "TIER", spec.textOr("tier", "default"));
                add(cols, "ORDER", n -> number(spec.of(n).path("order")));
                add(cols, "SELECTOR", spec.text("selector"));
                yield new Layout(cols, List.of("NAME", "TIER"), List.of("NAME", "TIER", "ORDER", "SELECTOR"));
            }
            case STAGED_KUBERNETES_NETWORK_POLICY -> {
                // Calico prints Go's struct form of the LabelSelector; ours is its compact JSON.
                add(cols, "PODSELECTOR", n -> spec.of(n).path("podSelector").isMissingNode() ? ""
                        : spec.of(n).path("podSelector").toString());
                yield new Layout(cols, List.of("NAME"), List.of("NAME", "PODSELECTOR"));
            }
            case GLOBAL_NETWORK_SET, NETWORK_SET -> {
                add(cols, "NETS", n -> truncate(join(spec.of(n).path("nets")), 80));
                yield new Layout(cols, List.of("NAME"), List.of("NAME", "NETS"));
            }
            case HOST_ENDPOINT -> {
                add(cols, "NODE", spec.text("node"));
                add(cols, "INTERFACE", spec.text("interfaceName"));
                add(cols, "IPS", n -> join(spec.of(n).path("expectedIPs")));
                add(cols, "PROFILES", n -> join(spec.of(n).path("profiles")));
                yield new Layout(cols, List.of("NAME", "NODE"), List.of("NAME", "NODE", "INTERFACE", "IPS", "PROFILES"));
            }
            case IP_POOL -> {
                add(cols, "CIDR", spec.text("cidr"));
                add(cols, "NAT", spec.textOr("natOutgoing", "false"));
                add(cols, "IPIPMODE", spec.textOr("ipipMode", "Never"));
                add(cols, "VXLANMODE", spec.textOr("vxlanMode", "Never"));
                add(cols, "DISABLED", spec.textOr("disabled", "false"));
                add(cols, "DISABLEBGPEXPORT", spec.textOr("disableBGPExport", "false"));
                add(cols, "SELECTOR", spec.text("nodeSelector"));
                yield new Layout(cols, List.of("NAME", "CIDR", "SELECTOR"), List.of("NAME", "CIDR", "NAT", "IPIPMODE",
                        "VXLANMODE", "DISABLED", "DISABLEBGPEXPORT", "SELECTOR"));
            }
            case IP_RESERVATION -> {
                add(cols, "CIDRS", n -> truncate(join(spec.of(n).path("reservedCIDRs")), 80));
                yield new Layout(cols, List.of("NAME"), List.of("NAME", "CIDRS"));
            }
            case IPAM_CONFIGURATION -> {
                add(cols, "STRICTAFFINITY", spec.textOr("strictAffinity", "false"));
                add(cols, "AUTOALLOCATEBLOCKS", spec.textOr("autoAllocateBlocks", "false"));
                add(cols, "MAXBLOCKSPERHOST", spec.textOr("maxBlocksPerHost", "0"));
                yield new Layout(cols, List.of("NAME", "STRICTAFFINITY", "AUTOALLOCATEBLOCKS"),
                        List.of("NAME", "STRICTAFFINITY", "AUTOALLOCATEBLOCKS", "MAXBLOCKSPERHOST"));
            }
            case NODE -> {
                JsonNodePath bgp = new JsonNodePath("spec", "bgp");
                add(cols, "ASN", n -> bgp.of(n).isMissingNode() ? ""
                        : bgp.of(n).hasNonNull("asNumber") ? text(bgp.of(n).path("asNumber")) : "(" + defaultAsNumber + ")");
                add(cols, "IPV4", bgp.text("ipv4Address"));
                add(cols, "IPV6", bgp.text("ipv6Address"));
                yield new Layout(cols, List.of("NAME"), List.of("NAME", "ASN", "IPV4", "IPV6"));
            }
            case PROFILE -> {
                add(cols, "LABELS", n -> join(spec.of(n).path("labelsToApply")));
                yield new Layout(cols, List.of("NAME"), List.of("NAME", "LABELS"));
            }
            case CALICO_NODE_STATUS -> {
                add(cols, "NODE", spec.text("node"));
                add(cols, "CLASSES", n -> join(spec.of(n).path("classes")));
                yield new Layout(cols, List.of("NAME", "NODE"), List.of("NAME", "NODE", "CLASSES"));
            }
            case TIER -> {
                add(cols, "ORDER", n -> number(spec.of(n).path("order")));
                yield same(cols, "NAME", "ORDER");
            }
            case WORKLOAD_ENDPOINT -> {
                add(cols, "WORKLOAD", n -> {
                    String w = text(spec.of(n).path("workload"));
                    return w.isEmpty() ? text(spec.of(n).path("pod")) : w;
                });
                add(cols, "NODE", spec.text("node"));
                add(cols, "NETWORKS", n -> join(spec.of(n).path("ipNetworks")));
                add(cols, "INTERFACE", spec.text("interfaceName"));
                add(cols, "PROFILES", n -> join(spec.of(n).path("profiles")));
                add(cols, "NATS", n -> join(spec.of(n).path("ipNATs")));
                add(cols, "ORCHESTRATOR", spec.text("orchestrator"));
                yield new Layout(cols, List.of("WORKLOAD", "NODE", "NETWORKS", "INTERFACE"),
                        List.of("NAME", "WORKLOAD", "NODE", "NETWORKS", "INTERFACE", "PROFILES", "NATS"));
            }
            default -> same(cols, "NAME");
        };
    }

    private static Layout same(Map<String, Column> cols, String... headings) {
        return new Layout(cols, List.of(headings), List.of(headings));
    }

    private static void add(Map<String, Column> cols, String heading, Function<JsonNode, String> cell) {
        cols.put(heading, new Column(heading, cell));
    }

    /** A fixed path below the resource's root, and cells read from the fields below it. */
    private record JsonNodePath(String... steps) {
        JsonNode of(JsonNode root) {
            JsonNode n = root;
            for (String s : steps) {
                n = n.path(s);
            }
            return n;
        }

        Function<JsonNode, String> text(String field) {
            return n -> ResourceTable.text(of(n).path(field));
        }

        Function<JsonNode, String> textOr(String field, String unset) {
            return n -> {
                JsonNode v = of(n).path(field);
                return v.isMissingNode() || v.isNull() ? unset : ResourceTable.text(v);
            };
        }
    }

    private static String text(JsonNode v) {
        if (v.isMissingNode() || v.isNull()) {
            return "";
        }
        return v.isValueNode() ? v.asText() : v.toString();
    }

    /** A float as Go prints it ({@code 100}, {@code 100.5}); {@code <nil>} when unset. */
    private static String number(JsonNode v) {
        if (v.isMissingNode() || v.isNull()) {
            return "<nil>";
        }
        return v.isNumber() ? new BigDecimal(v.asText()).stripTrailingZeros().toPlainString() : v.asText();
    }

    /** Calico's {@code join}: a list's items, or a map's sorted {@code k=v}, separated by commas. */
    private static String join(JsonNode v) {
        StringJoiner j = new StringJoiner(",");
        if (v.isArray()) {
            v.forEach(e -> j.add(e.isObject() ? natText(e) : text(e)));
        } else if (v.isObject()) {
            Map<String, String> sorted = new TreeMap<>();
            v.fields().forEachRemaining(e -> sorted.put(e.getKey(), text(e.getValue())));
            sorted.forEach((k, val) -> j.add(k + "=" + val));
        }
        return j.toString();
    }

    /** An {@code ipNATs} entry as Go prints its struct: {@code {internal external}}. */
    private static String natText(JsonNode e) {
        return "{" + text(e.path("internalIP")) + " " + text(e.path("externalIP")) + "}";
    }

    /** Calico's {@code joinAndTruncate}: longer than {@code max}, cut and ended by {@code ...}. */
    private static String truncate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 3) + "...";
    }
}
