package calico.launcher;

import java.util.List;
import java.util.UUID;

/** The tests' network namespaces: a unique prefix per test, and their deletion afterwards. */
final class TestNamespaces {

    private TestNamespaces() {
    }

    /** {@return a fresh prefix} ({@code nd-<random>-}: this part's tests, never another's). */
    static String uniquePrefix() {
        return "nd-" + UUID.randomUUID().toString().substring(0, 6) + "-";
    }

    /** {@return the namespaces whose names start with {@code prefix}}, sorted. */
    static List<String> list(String prefix) {
        return Command.run("ip", "netns", "list").lines().map(l -> l.split(" ")[0]).filter(n -> n.startsWith(prefix))
                .sorted().toList();
    }

    /** Deletes every namespace whose name starts with {@code prefix}. */
    static void deleteAll(String prefix) {
        for (String ns : list(prefix)) {
            Command.exec(List.of("ip", "netns", "delete", ns));
        }
    }
}
