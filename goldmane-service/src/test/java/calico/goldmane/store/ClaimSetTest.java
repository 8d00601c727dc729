package calico.goldmane.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The primitive claim table agrees with a HashSet through adds, duplicates, removals and growth. */
class ClaimSetTest {

    private record Claim(long k0, long k1, long k2) {
    }

    @Test
    void behavesAsASet() {
        var rnd = new Random(42);
        var set = new ClaimSet();
        var ref = new HashSet<Claim>();
        List<Claim> live = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            if (rnd.nextInt(3) > 0 || live.isEmpty()) {
                // Narrow value ranges so that duplicates and clustered homes are frequent.
                Claim c = new Claim(ClaimSet.k0(rnd.nextInt(500), rnd.nextInt(4)), 1_700_000_000L + 15L * rnd.nextInt(20),
                        1_700_000_015L + 15L * rnd.nextInt(20));
                boolean added = ref.add(c);
                assertThat(set.add(c.k0, c.k1, c.k2)).isEqualTo(added);
                if (added) {
                    live.add(c);
                }
            } else {
                Claim c = live.remove(rnd.nextInt(live.size()));
                ref.remove(c);
                set.remove(c.k0, c.k1, c.k2);
                assertThat(set.contains(c.k0, c.k1, c.k2)).isFalse();
            }
            assertThat(set.size()).isEqualTo(ref.size());
        }
        for (Claim c : ref) {
            assertThat(set.contains(c.k0, c.k1, c.k2)).isTrue();
        }
    }
}
