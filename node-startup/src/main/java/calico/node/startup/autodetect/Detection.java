package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import java.util.Optional;

/**
 * What autodetection found: the address with its subnet's prefix length, and on which interface;
 * or nothing, and why (for the error or warning start-up then gives).
 *
 * @param cidr      the address, e.g. {@code 10.0.0.5/24}; empty when none was found
 * @param interfaceName where it was found, when it was
 * @param reason    why nothing was found, when nothing was
 */
public record Detection(Optional<Cidr> cidr, String interfaceName, String reason) {

    static Detection found(Cidr cidr, String interfaceName) {
        return new Detection(Optional.of(cidr), interfaceName, null);
    }

    static Detection none(String reason) {
        return new Detection(Optional.empty(), null, reason);
    }
}
