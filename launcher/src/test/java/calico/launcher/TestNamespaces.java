package calico.launcher;

import calico.dataplane.testing.NetNs;
import java.util.List;

/** The tests' network namespaces: a unique prefix per test, and their deletion afterwards. */
final class TestNamespaces {

    private TestNamespaces() {
    }

    /**
     * {@return a fresh prefix}: an owned name and a dash ({@code nd-p<pid>-<8 hex>-}: this part's tests,
     * never another's), so that what a killed test JVM left is deleted by the next fixture's sweep
     * ({@link NetNs#newName}).
     */
    static String uniquePrefix() {
        return NetNs.newName("nd") + "-";
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
