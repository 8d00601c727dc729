package calico.api.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/** Random addresses and networks against independent oracles (the JDK, plain bit arithmetic). */
class IpAddressPropertiesTest {

    /** The JDK (fed bytes, never names) is the oracle: its long form must parse to the same address. */
    @Property(tries = 2000)
    void agreesWithTheJdkOnRandomAddresses(@ForAll("addresses") byte[] bytes) throws UnknownHostException {
        IpAddress ip = IpAddress.of(bytes);
        assertThat(ip.toBytes()).containsExactly(bytes);
        assertThat(IpAddress.parse(ip.toString())).isEqualTo(ip);
        String jdk = InetAddress.getByAddress(bytes).getHostAddress();
        if (bytes.length == 16 && InetAddress.getByAddress(bytes).getAddress().length == 16) {
            assertThat(IpAddress.parse(jdk)).isEqualTo(ip);
            assertThat(ip.toString()).doesNotContain(":::").doesNotMatch(".*(^|:)0[0-9a-f].*")
                    .isLowerCase();
        } else if (bytes.length == 4) {
            assertThat(ip.toString()).isEqualTo(jdk);
        }
    }

    @Provide
    Arbitrary<byte[]> addresses() {
        // Sparse groups make zero runs (what the :: rule is about) common.
        Arbitrary<Byte> sparse = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just((byte) 0)),
                Tuple.of(1, Arbitraries.bytes()));
        return Arbitraries.oneOf(sparse.array(byte[].class).ofSize(4), sparse.array(byte[].class).ofSize(16));
    }

    /** contains, overlaps and network agree with a definition by the first address of each network. */
    @Property(tries = 2000)
    void networkRelationsAgreeWithBitArithmetic(@ForAll("addresses") byte[] a, @ForAll("addresses") byte[] b,
            @ForAll("prefixes") int pa, @ForAll("prefixes") int pb) {
        IpAddress x = IpAddress.of(a);
        IpAddress y = IpAddress.of(b);
        Cidr cx = new Cidr(x, Math.min(pa, x.bits()));
        Cidr cy = new Cidr(y, Math.min(pb, y.bits()));
        boolean sameVersion = x.version() == y.version();
        boolean xHoldsY = sameVersion && cy.prefixLength() >= cx.prefixLength()
                && samePrefix(a, b, cx.prefixLength());
        boolean yHoldsX = sameVersion && cx.prefixLength() >= cy.prefixLength()
                && samePrefix(a, b, cy.prefixLength());
        assertThat(cx.contains(cy)).isEqualTo(xHoldsY);
        assertThat(cx.overlaps(cy)).isEqualTo(xHoldsY || yHoldsX).isEqualTo(cy.overlaps(cx));
        assertThat(cx.contains(y)).isEqualTo(sameVersion && samePrefix(a, b, cx.prefixLength()));
        assertThat(cx.network().isStrictlyMasked()).isTrue();
        assertThat(cx.network().contains(cx)).isTrue();
        assertThat(Cidr.parse(cx.toString())).isEqualTo(cx);
    }

    private static boolean samePrefix(byte[] a, byte[] b, int bits) {
        for (int i = 0; i < bits; i++) {
            int mask = 0x80 >>> (i % 8);
            if ((a[i / 8] & mask) != (b[i / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    @Provide
    Arbitrary<Integer> prefixes() {
        return Arbitraries.integers().between(0, 128);
    }
}
