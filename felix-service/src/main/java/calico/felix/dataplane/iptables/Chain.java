package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Rule;
import java.util.List;

/** One chain we own in one table of one family, with its rules in order. */
public record Chain(String name, List<Rule> rules) {

    public Chain {
        rules = List.copyOf(rules);
    }
}
