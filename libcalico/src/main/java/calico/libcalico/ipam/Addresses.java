package calico.libcalico.ipam;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.math.BigInteger;

/** Address arithmetic on {@link IpAddress} (offsets inside a network), through BigInteger for IPv6. */
final class Addresses {

    private static final BigInteger MASK64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    private Addresses() {
    }

    static BigInteger value(IpAddress ip) {
        if (ip.version() == 4) {
            return BigInteger.valueOf(ip.low());
        }
        return new BigInteger(Long.toUnsignedString(ip.high())).shiftLeft(64).or(new BigInteger(Long.toUnsignedString(ip.low())));
    }

    static IpAddress of(int version, BigInteger v) {
        if (version == 4) {
            return new IpAddress(4, 0, v.longValueExact());
        }
        return new IpAddress(6, v.shiftRight(64).and(MASK64).longValue(), v.and(MASK64).longValue());
    }

    /** {@return the address {@code offset} after the network's first address} */
    static IpAddress add(Cidr network, BigInteger offset) {
        return of(network.version(), value(network.network().address()).add(offset));
    }

    /** {@return the offset of {@code ip} from the network's first address} (the ip must be inside) */
    static BigInteger offset(Cidr network, IpAddress ip) {
        return value(ip).subtract(value(network.network().address()));
    }

    /** {@return how many addresses the network has} */
    static BigInteger size(Cidr network) {
        return BigInteger.ONE.shiftLeft(network.address().bits() - network.prefixLength());
    }
}
