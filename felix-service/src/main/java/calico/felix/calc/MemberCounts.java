package calico.felix.calc;

import java.util.HashMap;
import java.util.Map;

/**
 * The members of one IP set, each counted by how many sources (endpoints, network sets, slices)
 * contribute it: a member is announced when its first contributor comes and withdrawn when its
 * last goes, so a duplicate address never flaps. One per active set, in each member calculator.
 */
final class MemberCounts {

    private final String id;
    private final IpSetMemberCalculator.IpSetListener listener;
    private final Map<IpSetMember, Integer> counts = new HashMap<>();

    MemberCounts(String id, IpSetMemberCalculator.IpSetListener listener) {
        this.id = id;
        this.listener = listener;
    }

    /** Adds ({@code delta} +1) or withdraws (-1) one source's members, announcing only real changes. */
    void contribute(Iterable<IpSetMember> members, int delta) {
        for (IpSetMember member : members) {
            int n = counts.merge(member, delta, Integer::sum);
            if (n == 0) {
                counts.remove(member);
                listener.onMemberRemoved(id, member);
            } else if (n == 1 && delta > 0) {
                listener.onMemberAdded(id, member);
            }
        }
    }
}
