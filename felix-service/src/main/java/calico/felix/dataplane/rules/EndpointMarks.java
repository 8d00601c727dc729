package calico.felix.dataplane.rules;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One packet-mark value per endpoint interface, in the {@link MarkBits#endpoint()} bits: with kube-proxy in IPVS
 * mode, filter INPUT marks traffic it treats as forwarded with the mark of the interface it came in on, and filter
 * OUTPUT (which IPVS sends it through next) applies that endpoint's policy by the mark, as Calico's
 * {@code cali-set-endpoint-mark} / {@code cali-from-endpoint-mark}. The lowest value, {@code nonCalico}, marks
 * traffic from an interface that is no endpoint. A name keeps its value while it exists (its slot comes from a hash
 * of the name, the next free one on a collision, names taken in sorted order), so adding an endpoint rarely moves
 * another's mark.
 *
 * @param mask      the endpoint bits
 * @param nonCalico the mark of traffic from no endpoint's interface
 * @param byName    each interface's mark
 */
public record EndpointMarks(long mask, long nonCalico, SortedMap<String, Long> byName) {

    public EndpointMarks {
        byName = Collections.unmodifiableSortedMap(new TreeMap<>(byName));
    }

    /**
     * {@return marks for {@code names} in {@code bits}'s endpoint bits}
     *
     * @throws IllegalArgumentException naming {@code iptablesMarkMask} when its endpoint bits cannot give every
     *                                  name a distinct mark
     */
    public static EndpointMarks allocate(MarkBits bits, Collection<String> names) {
        long mask = bits.endpoint();
        int width = Long.bitCount(mask);
        long slots = width >= 63 ? Long.MAX_VALUE : (1L << width);
        TreeSet<String> sorted = new TreeSet<>(names);
        // slot 0 is "no mark", slot 1 the non-Calico mark; endpoints take 2 .. slots-1
        if (width < 2 || sorted.size() > slots - 2) {
            throw new IllegalArgumentException("iptablesMarkMask: " + width + " bits left for endpoint marks after "
                    + "accept, pass and scratch, too few for " + sorted.size() + " endpoints and the non-Calico mark");
        }
        Map<Long, String> taken = new LinkedHashMap<>();
        SortedMap<String, Long> out = new TreeMap<>();
        for (String name : sorted) {
            long slot = 2 + Math.floorMod((long) name.hashCode(), slots - 2);
            while (taken.containsKey(slot)) {
                slot = slot + 1 == slots ? 2 : slot + 1;
            }
            taken.put(slot, name);
            out.put(name, spread(slot, mask));
        }
        return new EndpointMarks(mask, spread(1, mask), out);
    }

    /** {@return {@code n}'s bits laid into {@code mask}'s set bits, lowest first} */
    static long spread(long n, long mask) {
        long out = 0;
        long m = mask;
        for (long v = n; v != 0 && m != 0; v >>>= 1) {
            long bit = Long.lowestOneBit(m);
            if ((v & 1) != 0) {
                out |= bit;
            }
            m &= ~bit;
        }
        return out;
    }
}
