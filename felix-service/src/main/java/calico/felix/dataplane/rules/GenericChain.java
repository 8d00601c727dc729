package calico.felix.dataplane.rules;

import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/** A chain we own, in one table: either rules in order or a per-interface dispatch. */
public sealed interface GenericChain {

    String name();

    /** Rules evaluated in order. */
    record Rules(String name, List<GenericRule> rules) implements GenericChain {
        public Rules {
            Objects.requireNonNull(name, "name");
            rules = List.copyOf(rules);
        }
    }

    /**
     * Sends a packet to the chain of its interface ({@code Goto}): by incoming interface when
     * {@code in}, else by outgoing; a packet on no listed interface gets {@code fallback}
     * ({@code null}: return to the caller). iptables renders one {@code -i/-o … -g} rule per
     * interface; nftables one verdict-map lookup.
     */
    record Dispatch(String name, boolean in, SortedMap<String, String> targets, Target fallback)
            implements GenericChain {
        public Dispatch {
            Objects.requireNonNull(name, "name");
            targets = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(targets));
        }
    }
}
