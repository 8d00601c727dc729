package calico.felix.dataplane.bpf;

import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Workload tables compiled by earlier applies, by what they are made of (tiers, profiles,
 * direction), so an apply compiles only the tables its batch changed (the batch hint): a policy or
 * profile update drops the tables that name it, a settings change or a resync (new set and prefix
 * IDs) drops all, a table no endpoint uses after a compile goes (its IDs may be freed). Set
 * membership and endpoints do not enter a table (sets are named by ID), so they drop nothing.
 * Used by one thread (the dataplane's).
 */
final class WorkloadTables {

    /** What a workload direction's table is made of. */
    record Key(List<TierPolicies> tiers, List<String> profiles, boolean inbound) {
    }

    /** A compiled table with the set keys and flow-log prefixes it uses. */
    record Table(List<Rule> rules, Set<String> sets, Set<String> prefixes) {
    }

    private final Map<Key, Table> tables = new HashMap<>();

    Table get(Key k) {
        return tables.get(k);
    }

    void put(Key k, Table t) {
        tables.put(k, t);
    }

    void retainOnly(Set<Key> inUse) {
        tables.keySet().retainAll(inUse);
    }

    void clear() {
        tables.clear();
    }

    int size() {
        return tables.size();
    }

    /** Drops what {@code batch} (already in the model) makes stale. */
    void invalidate(List<DataplaneUpdate> batch) {
        for (DataplaneUpdate u : batch) {
            if (u instanceof DataplaneUpdate.ActivePolicyUpdate p) {
                dropPolicy(p.id());
            } else if (u instanceof DataplaneUpdate.ActivePolicyRemove p) {
                dropPolicy(p.id());
            } else if (u instanceof DataplaneUpdate.ActiveProfileUpdate p) {
                dropProfile(p.name());
            } else if (u instanceof DataplaneUpdate.ActiveProfileRemove p) {
                dropProfile(p.name());
            } else if (u instanceof DataplaneUpdate.ConfigUpdate) {
                tables.clear(); // marks, flow logs, failsafes: every table may change
            }
        }
    }

    private void dropPolicy(PolicyId id) {
        tables.keySet().removeIf(k -> k.tiers().stream().anyMatch(t -> t.policies().contains(id)));
    }

    private void dropProfile(String name) {
        tables.keySet().removeIf(k -> k.profiles().contains(name));
    }
}
