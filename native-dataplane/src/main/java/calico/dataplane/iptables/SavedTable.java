package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One table as {@code -save} printed it: each chain (in output order) with its policy
 * ({@code -} for user chains) and its rules as the text after {@code -A <chain> }, in the
 * normalised form the save tool prints (compare against earlier saves, not against our input).
 */
public record SavedTable(Table table, Map<String, String> policies, Map<String, List<String>> rules) {

    public SavedTable {
        policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
        Map<String, List<String>> copy = new LinkedHashMap<>();
        rules.forEach((k, v) -> copy.put(k, List.copyOf(v)));
        rules = Collections.unmodifiableMap(copy);
    }

    /** {@return the chain names in save order} */
    public List<String> chains() {
        return List.copyOf(policies.keySet());
    }

    /** {@return the chain's rules, empty if the chain has none or does not exist} */
    public List<String> rules(String chain) {
        return rules.getOrDefault(chain, List.of());
    }

    /** Parses the {@code *<table>} section of {@code -save} output; an absent section is an empty table. */
    public static SavedTable parse(Table table, String saveOutput) {
        Map<String, String> policies = new LinkedHashMap<>();
        Map<String, List<String>> rules = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : saveOutput.split("\n")) {
            if (line.startsWith("*")) {
                inTable = line.substring(1).strip().equals(table.kernelName());
            } else if (!inTable || line.startsWith("#")) {
                continue;
            } else if (line.equals("COMMIT")) {
                inTable = false;
            } else if (line.startsWith(":")) {
                String[] parts = line.substring(1).split(" ");
                policies.put(parts[0], parts.length > 1 ? parts[1] : "-");
                rules.putIfAbsent(parts[0], new ArrayList<>());
            } else if (line.startsWith("-A ")) {
                int sp = line.indexOf(' ', 3);
                String chain = sp < 0 ? line.substring(3) : line.substring(3, sp);
                rules.computeIfAbsent(chain, c -> new ArrayList<>()).add(sp < 0 ? "" : line.substring(sp + 1));
            }
        }
        return new SavedTable(table, policies, rules);
    }
}
