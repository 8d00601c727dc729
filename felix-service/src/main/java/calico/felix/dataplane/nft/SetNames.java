package calico.felix.dataplane.nft;

import calico.felix.calc.BoundedMemo;
import calico.felix.dataplane.rules.IpFamily;
import java.util.function.BiFunction;

/**
 * Kernel names of the graph's sets ({@link NftNames#set}, a SHA-256 of the ID each), made once
 * per family and ID: a catch-up prunes and formats thousands of new policy chains, and hashing
 * their set names was a tenth of the render. Emptied when it holds {@link #LIMIT} names of a
 * family. Not thread-safe (the dataplane thread).
 */
final class SetNames implements BiFunction<IpFamily, String, String> {

    static final int LIMIT = 50_000;

    private final BoundedMemo<String, String> v4 = new BoundedMemo<>(LIMIT);
    private final BoundedMemo<String, String> v6 = new BoundedMemo<>(LIMIT);

    @Override
    public String apply(IpFamily family, String setId) {
        return (family == IpFamily.V6 ? v6 : v4).get(setId, id -> NftNames.set(family, id));
    }
}
