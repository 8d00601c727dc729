package calico.libcalico.ipam;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random sequences of assign / release-by-address / release-by-handle / release-affinity on
 * three nodes and a small pool (so blocks fill, get claimed, borrowed from and emptied), checked
 * against a plain model after every step: the handle holds exactly what the model says, no
 * address is held twice, and the consistency check finds nothing at the end. Seeded, so a
 * failure replays.
 */
class IpamRandomOperationsTest {

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42, 20261201})
    void randomOperationsKeepIpamConsistent(long seed) {
        Random rnd = new Random(seed);
        try (MemoryDatastore store = new MemoryDatastore()) {
            store.create(new IPPool(ObjectMeta.named("p"),
                    new IPPoolSpec("10.0.0.0/27", null, null, null, null, null, 29, null, null, null, null)));
            boolean strict = rnd.nextBoolean();
            store.create(new IPAMConfiguration(ObjectMeta.named("default"), new IPAMConfigurationSpec(strict, true, 0)));
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            Map<String, Set<IpAddress>> model = new HashMap<>();
            List<String> nodes = List.of("n1", "n2", "n3");
            for (int step = 0; step < 300; step++) {
                int op = rnd.nextInt(10);
                String handle = "h" + rnd.nextInt(20);
                String node = nodes.get(rnd.nextInt(nodes.size()));
                if (op < 5) {
                    int n = 1 + rnd.nextInt(3);
                    try {
                        List<Cidr> got = ipam.autoAssign(new AutoAssignRequest(handle, node, n, 0, List.of(), List.of(),
                                Map.of(), IntendedUse.WORKLOAD)).ipv4();
                        assertThat(got).hasSize(n);
                        got.forEach(c -> model.computeIfAbsent(handle, h -> new HashSet<>()).add(c.address()));
                    } catch (IpamException.PoolExhausted full) {
                        // all or nothing: the model is unchanged
                    }
                } else if (op < 7) {
                    ipam.releaseByHandle(handle);
                    model.remove(handle);
                } else if (op < 9) {
                    List<IpAddress> held = model.values().stream().flatMap(Set::stream).toList();
                    IpAddress ip = held.isEmpty() || rnd.nextInt(5) == 0
                            ? IpAddress.parse("10.0.0." + rnd.nextInt(32)) : held.get(rnd.nextInt(held.size()));
                    boolean inModel = model.values().stream().anyMatch(s -> s.contains(ip));
                    List<IpAddress> notAllocated = ipam.releaseIps(List.of(ip));
                    assertThat(notAllocated.isEmpty()).as("release %s at step %d", ip, step).isEqualTo(inModel);
                    model.values().forEach(s -> s.remove(ip));
                    model.values().removeIf(Set::isEmpty);
                } else {
                    ipam.releaseHostAffinities(node, rnd.nextBoolean());
                }
                assertThat(new HashSet<>(ipam.addressesByHandle(handle)))
                        .as("handle %s after step %d (op %d)", handle, step, op)
                        .isEqualTo(model.getOrDefault(handle, Set.of()));
            }
            List<IpAddress> all = new ArrayList<>();
            model.keySet().forEach(h -> all.addAll(ipam.addressesByHandle(h)));
            assertThat(new HashSet<>(all)).hasSameSizeAs(all); // no address held twice
            assertThat(ipam.usage().pools().get(0).inUse()).isEqualTo(all.size());
            assertThat(ipam.check().problems()).isEmpty();
        }
    }
}
