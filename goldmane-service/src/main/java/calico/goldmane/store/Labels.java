package calico.goldmane.store;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * The source and destination label intersections of one row: sorted, immutable and interned so
 * that rows with the same labels share one instance and the common case (labels unchanged) is a
 * list comparison.
 */
public record Labels(List<String> source, List<String> dest) {

    public static final Labels NONE = new Labels(List.of(), List.of());

    /** {@return the labels both carry} */
    public static List<String> intersect(List<String> a, List<String> b) {
        if (a == b || a.equals(b)) {
            return a;
        }
        var keep = new HashSet<>(b);
        var out = new ArrayList<String>(Math.min(a.size(), b.size()));
        for (String s : a) {
            if (keep.contains(s)) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * Writer-owned interner, so rows with equal labels share one instance across buckets (and
     * queries compare by reference). Cleared only when it grows large; rows keep their instances.
     */
    static final class Interner {
        private final Map<Labels, Labels> seen = new HashMap<>();

        Labels of(List<String> source, List<String> dest) {
            Labels l = new Labels(sorted(source), sorted(dest));
            if (l.source.isEmpty() && l.dest.isEmpty()) {
                return NONE;
            }
            return seen.computeIfAbsent(l, k -> k);
        }

        void trim(int max) {
            if (seen.size() > max) {
                seen.clear();
            }
        }

        private static List<String> sorted(List<String> in) {
            if (in.isEmpty()) {
                return List.of();
            }
            var copy = new ArrayList<>(in);
            copy.sort(null);
            for (int i = copy.size() - 1; i > 0; i--) {
                if (copy.get(i).equals(copy.get(i - 1))) {
                    copy.remove(i);
                }
            }
            return List.copyOf(copy);
        }
    }
}
