package calico.goldmane.store;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

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
     * Thread-safe interner, so rows with equal labels share one instance across buckets (and the
     * writer and queries compare by reference first). Collector threads intern each flow's labels
     * (hashing them there, not on the writer); the writer interns intersections. Cleared only
     * when it grows large (by the writer); rows keep their instances, equality stays correct.
     */
    static final class Interner {
        private final Map<Labels, Labels> seen = new ConcurrentHashMap<>();

        Labels of(List<String> source, List<String> dest) {
            if (source.isEmpty() && dest.isEmpty()) {
                return NONE;
            }
            if (sortedDistinct(source) && sortedDistinct(dest)) {
                // Felix sends labels sorted: probe without copying.
                Labels hit = seen.get(new Labels(source, dest));
                if (hit != null) {
                    return hit;
                }
            }
            Labels l = new Labels(sorted(source), sorted(dest));
            Labels had = seen.putIfAbsent(l, l);
            return had == null ? l : had;
        }

        private static boolean sortedDistinct(List<String> in) {
            for (int i = 1, n = in.size(); i < n; i++) {
                if (in.get(i - 1).compareTo(in.get(i)) >= 0) {
                    return false;
                }
            }
            return true;
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
