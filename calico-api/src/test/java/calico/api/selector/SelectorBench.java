package calico.api.selector;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Selector throughput: 1,000 distinct generated selectors against 10,000 label maps of 10
 * labels each (10 M evaluations a pass), and parse time per selector. Run with
 * {@code bench/run.sh calico-api calico.api.selector.SelectorBench}.
 */
public final class SelectorBench {

    private static final String[] KEYS = {"app", "tier", "env", "version", "team", "zone", "role", "release",
            "projectcalico.org/namespace", "projectcalico.org/orchestrator", "projectcalico.org/serviceaccount",
            "app.kubernetes.io/name", "app.kubernetes.io/component", "pod-template-hash", "k8s-app", "track"};
    private static final String[] VALUES = {"web", "db", "cache", "frontend", "backend", "prod", "staging", "dev",
            "v1", "v2", "blue", "green", "default", "kube-system", "k8s", "payments"};

    private SelectorBench() {
    }

    public static void main(String[] args) {
        double loadAtStart = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        Random r = new Random(42);
        List<String> texts = distinctSelectors(r, 1_000);
        List<Map<String, String>> maps = labelMaps(r, 10_000, 10, false);
        List<Map<String, String>> internedMaps = labelMaps(new Random(43), 10_000, 10, true);

        // Parse: warm up, then time whole rounds over the 1,000 texts.
        // Wall time is shared with whatever else runs on the machine; thread CPU time is not.
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        long sink = 0;
        for (int i = 0; i < 200; i++) {
            sink += parseAll(texts);
        }
        int parseRounds = 200;
        long t0 = System.nanoTime();
        long c0 = cpu.getCurrentThreadCpuTime();
        for (int i = 0; i < parseRounds; i++) {
            sink += parseAll(texts);
        }
        double parseCount = (double) parseRounds * texts.size();
        double parseMicros = (System.nanoTime() - t0) / 1e3 / parseCount;
        double parseCpuMicros = (cpu.getCurrentThreadCpuTime() - c0) / 1e3 / parseCount;

        for (int i = 0; i < 20; i++) {
            for (String t : texts) {
                sink += Selector.parse(t).uniqueId().length();
            }
        }
        List<Selector> selectors = texts.stream().map(Selector::parse).toList();
        long c1 = cpu.getCurrentThreadCpuTime();
        for (Selector s : selectors) {
            sink += s.uniqueId().length();
        }
        double idCpuMicros = (cpu.getCurrentThreadCpuTime() - c1) / 1e3 / selectors.size();

        // Match: one warm-up pass, then timed passes of selectors x maps.
        sink += matchAll(selectors, maps);
        int passes = 3;
        long matched = 0;
        long t2 = System.nanoTime();
        long c2 = cpu.getCurrentThreadCpuTime();
        long a2 = allocatedBytes();
        for (int p = 0; p < passes; p++) {
            matched += matchAll(selectors, maps);
        }
        long allocated = allocatedBytes() - a2;
        double seconds = (System.nanoTime() - t2) / 1e9;
        double cpuSeconds = (cpu.getCurrentThreadCpuTime() - c2) / 1e9;
        long evaluations = (long) passes * selectors.size() * maps.size();

        // The other order: each label map stays in cache while every selector is tried on it
        // (felix's case when one endpoint's labels change).
        sink += matchAllByMap(selectors, maps);
        long c3 = cpu.getCurrentThreadCpuTime();
        long t3 = System.nanoTime();
        for (int p = 0; p < passes; p++) {
            sink += matchAllByMap(selectors, maps);
        }
        double byMapCpuSeconds = (cpu.getCurrentThreadCpuTime() - c3) / 1e9;
        double byMapSeconds = (System.nanoTime() - t3) / 1e9;

        sink += matchAll(selectors, internedMaps);
        long c4 = cpu.getCurrentThreadCpuTime();
        long t4 = System.nanoTime();
        for (int p = 0; p < passes; p++) {
            sink += matchAll(selectors, internedMaps);
        }
        double internedCpuSeconds = (cpu.getCurrentThreadCpuTime() - c4) / 1e9;
        double internedSeconds = (System.nanoTime() - t4) / 1e9;

        System.out.printf(Locale.ROOT, "selectors=%d distinct, label maps=%d x %d labels (fresh key strings unless noted), java=%s%n",
                selectors.size(), maps.size(), 10, System.getProperty("java.version"));
        System.out.printf(Locale.ROOT, "load average at start: %.2f on %d cpus%n",
                loadAtStart, Runtime.getRuntime().availableProcessors());
        System.out.printf(Locale.ROOT, "parse: %.2f us/selector thread CPU, %.2f us wall (mean of %d rounds after warm-up)%n",
                parseCpuMicros, parseMicros, parseRounds);
        System.out.printf(Locale.ROOT, "uniqueId (first call on a selector, SHA-224): %.2f us thread CPU%n", idCpuMicros);
        System.out.printf(Locale.ROOT,
                "match, selector-major order: %.1f M evaluations/s by thread CPU, %.1f M/s wall (%d evaluations, %.2f s CPU, %.2f s wall, %.1f%% matched)%n",
                evaluations / cpuSeconds / 1e6, evaluations / seconds / 1e6, evaluations, cpuSeconds, seconds,
                100.0 * matched / evaluations);
        System.out.printf(Locale.ROOT, "match allocation: %d bytes in total over %d evaluations%n",
                allocated, evaluations);
        System.out.printf(Locale.ROOT,
                "match, map-major order: %.1f M evaluations/s by thread CPU, %.1f M/s wall%n",
                evaluations / byMapCpuSeconds / 1e6, evaluations / byMapSeconds / 1e6);
        System.out.printf(Locale.ROOT,
                "match, selector-major order, interned map keys: %.1f M evaluations/s by thread CPU, %.1f M/s wall%n",
                evaluations / internedCpuSeconds / 1e6, evaluations / internedSeconds / 1e6);
        System.out.printf(Locale.ROOT, "example selector: %s%n", selectors.get(7).canonical());
        System.out.println("(sink " + (sink & 1) + ")");
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    private static long parseAll(List<String> texts) {
        long n = 0;
        for (String t : texts) {
            n += Selector.parse(t).canonical().length();
        }
        return n;
    }

    private static long matchAll(List<Selector> selectors, List<Map<String, String>> maps) {
        long matched = 0;
        for (Selector s : selectors) {
            for (Map<String, String> m : maps) {
                if (s.matches(m)) {
                    matched++;
                }
            }
        }
        return matched;
    }

    private static long matchAllByMap(List<Selector> selectors, List<Map<String, String>> maps) {
        long matched = 0;
        for (Map<String, String> m : maps) {
            for (Selector s : selectors) {
                if (s.matches(m)) {
                    matched++;
                }
            }
        }
        return matched;
    }

    /** Shapes seen in real policies: conjunctions of equality/set tests, some ||, !has, prefixes. */
    private static List<String> distinctSelectors(Random r, int count) {
        Set<String> canonical = new LinkedHashSet<>();
        List<String> texts = new ArrayList<>();
        while (texts.size() < count) {
            String text = selector(r, 2);
            if (canonical.add(Selector.parse(text).canonical())) {
                texts.add(text);
            }
        }
        return texts;
    }

    private static String selector(Random r, int depth) {
        int terms = 1 + r.nextInt(3);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < terms; i++) {
            if (i > 0) {
                sb.append(r.nextInt(4) == 0 ? " || " : " && ");
            }
            if (depth > 0 && r.nextInt(6) == 0) {
                sb.append('(').append(selector(r, depth - 1)).append(')');
            } else {
                sb.append(term(r));
            }
        }
        return sb.toString();
    }

    private static String term(Random r) {
        String k = KEYS[r.nextInt(KEYS.length)];
        String v = VALUES[r.nextInt(VALUES.length)];
        return switch (r.nextInt(10)) {
            case 0 -> "has(" + k + ")";
            case 1 -> "!has(" + k + ")";
            case 2 -> k + " != '" + v + "'";
            case 3 -> k + " in {'" + v + "', '" + VALUES[r.nextInt(VALUES.length)] + "', '"
                    + VALUES[r.nextInt(VALUES.length)] + "'}";
            case 4 -> k + " not in {'" + v + "', '" + VALUES[r.nextInt(VALUES.length)] + "'}";
            case 5 -> k + " starts with '" + v.charAt(0) + "'";
            default -> k + " == \"" + v + "\"";
        };
    }

    /** {@code interned}: keys as Jackson decodes them (interned); else fresh String instances. */
    private static List<Map<String, String>> labelMaps(Random r, int count, int size, boolean interned) {
        List<Map<String, String>> maps = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Map<String, String> m = new HashMap<>();
            while (m.size() < size) {
                String key = KEYS[r.nextInt(KEYS.length)];
                m.put(interned ? key : new String(key), VALUES[r.nextInt(VALUES.length)]);
            }
            maps.add(m);
        }
        return maps;
    }
}
