package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DerivedUidTest {

    /** Expected values computed independently (Python: reverse the bits of bytes 0-5, 7 and 9-15). */
    @ParameterizedTest
    @CsvSource({
            "6f1f4c1e-3b2a-4b5e-9c1d-2a7e5f0b8d31, f6f83278-dc54-4b7a-9cb8-547efad0b18c",
            "9a8b7c6d-1234-4abc-8def-0123456789ab, 59d13eb6-482c-4a3d-8df7-80c4a2e691d5",
            "00000000-0000-0000-0000-000000000001, 00000000-0000-0000-0000-000000000080",
            "9A8B7C6D-1234-4ABC-8DEF-0123456789AB, 59d13eb6-482c-4a3d-8df7-80c4a2e691d5"})
    void reversesTheBitsOfEveryByteButVersionAndVariant(String uid, String derived) {
        assertThat(DerivedUid.of(uid)).isEqualTo(derived);
    }

    @Property
    void isAnInvolutionAndKeepsTheVersionAndVariant(@ForAll long hi, @ForAll long lo) {
        UUID u = new UUID((hi & ~0xF000L) | 0x4000L, (lo & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L);

        String derived = DerivedUid.of(u.toString());

        assertThat(DerivedUid.of(derived)).isEqualTo(u.toString());
        assertThat(UUID.fromString(derived).version()).isEqualTo(4);
        assertThat(UUID.fromString(derived).variant()).isEqualTo(2);
    }

    @Test
    void rejectsTextThatIsNotAUuid() {
        assertThatThrownBy(() -> DerivedUid.of("6f1f4c1e3b2a4b5e9c1d2a7e5f0b8d31"))
                .hasMessage("\"6f1f4c1e3b2a4b5e9c1d2a7e5f0b8d31\" is not a UUID");
        assertThatThrownBy(() -> DerivedUid.of("6f1f4c1e-3b2a-4b5e-9c1d-2a7e5f0b8dzz")).hasMessageContaining("is not a UUID");
    }
}
