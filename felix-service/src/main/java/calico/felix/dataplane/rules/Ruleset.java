package calico.felix.dataplane.rules;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything the rule renderer produces for one backend view: our chains per table, where the
 * kernel's hooks enter them, and the sets the driver itself owns (pool sets, not graph sets).
 *
 * @param families    the families the chains serve ({V4}, {V6}, or both for an nftables inet table)
 * @param chains      per table, chains by name
 * @param entries     which of our chains each kernel hook calls (iptables: a jump from the built-in chain;
 *                    nftables: a base chain of that hook)
 * @param driverSets  sets the driver programs from this ruleset, by ID, with CIDR members of any family
 * @param graphSetIds calculation-graph IP set IDs the chains reference
 */
public record Ruleset(Set<IpFamily> families, Map<Table, SortedMap<String, GenericChain>> chains,
                      List<Entry> entries, SortedMap<String, Set<String>> driverSets, Set<String> graphSetIds) {

    /** Kernel tables we may own chains in. */
    public enum Table { FILTER, NAT, MANGLE, RAW }

    /** Netfilter hooks. */
    public enum Hook { PREROUTING, INPUT, FORWARD, OUTPUT, POSTROUTING }

    /** The kernel's {@code hook} in {@code table} jumps to our {@code chain} first thing. */
    public record Entry(Table table, Hook hook, String chain) {
        public Entry {
            Objects.requireNonNull(table, "table");
            Objects.requireNonNull(hook, "hook");
            Objects.requireNonNull(chain, "chain");
        }
    }

    public Ruleset {
        families = Set.copyOf(families);
        TreeMap<Table, SortedMap<String, GenericChain>> c = new TreeMap<>();
        chains.forEach((t, m) -> c.put(t, java.util.Collections.unmodifiableSortedMap(new TreeMap<>(m))));
        chains = java.util.Collections.unmodifiableMap(c);
        entries = List.copyOf(entries);
        driverSets = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(driverSets));
        graphSetIds = Set.copyOf(graphSetIds);
    }

    /** {@return the chains of one table}, empty when we own none there. */
    public SortedMap<String, GenericChain> chains(Table table) {
        return chains.getOrDefault(table, java.util.Collections.emptySortedMap());
    }
}
