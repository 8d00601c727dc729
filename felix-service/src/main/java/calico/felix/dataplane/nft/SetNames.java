package calico.felix.dataplane.nft;

import calico.felix.dataplane.rules.IpFamily;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Kernel names of the graph's sets ({@link NftNames#set}, a SHA-256 of the ID each), made once
 * per family and ID: a catch-up prunes and formats thousands of new policy chains, and hashing
 * their set names was a tenth of the render. Emptied when it holds {@link #LIMIT} names of a
 * family. Not thread-safe (the dataplane thread).
 */
final class SetNames implements BiFunction<IpFamily, String, String> {

    static final int LIMIT = 50_000;

    private final Map<String, String> v4 = new HashMap<>();
    private final Map<String, String> v6 = new HashMap<>();

    @Override
    public String apply(IpFamily family, String setId) {
        Map<String, String> names = family == IpFamily.V6 ? v6 : v4;
        String name = names.get(setId);
        if (name == null) {
            if (names.size() >= LIMIT) {
                names.clear();
            }
            name = NftNames.set(family, setId);
            names.put(setId, name);
        }
        return name;
    }
}
