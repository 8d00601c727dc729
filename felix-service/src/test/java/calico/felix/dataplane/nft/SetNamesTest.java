package calico.felix.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.dataplane.rules.IpFamily;
import org.junit.jupiter.api.Test;

/** The memo gives exactly {@link NftNames#set}'s names, per family, also once it has been emptied. */
class SetNamesTest {

    @Test
    void namesAreNftNamesPerFamilyAcrossTheLimit() {
        SetNames names = new SetNames();
        for (int i = 0; i < SetNames.LIMIT + 10; i += 997) {
            String id = "s:selector-" + i + "-that-is-longer-than-a-kernel-set-name";
            for (IpFamily f : IpFamily.values()) {
                assertThat(names.apply(f, id)).isEqualTo(NftNames.set(f, id)).isEqualTo(names.apply(f, id));
            }
        }
        for (int i = 0; i <= SetNames.LIMIT; i++) { // past the limit: emptied, still right
            names.apply(IpFamily.V4, "id" + i);
        }
        assertThat(names.apply(IpFamily.V4, "s:x")).isEqualTo(NftNames.set(IpFamily.V4, "s:x"));
        assertThat(names.apply(IpFamily.V6, "s:x")).isEqualTo(NftNames.set(IpFamily.V6, "s:x"))
                .isNotEqualTo(names.apply(IpFamily.V4, "s:x"));
    }
}
