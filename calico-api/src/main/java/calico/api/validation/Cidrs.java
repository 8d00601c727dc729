package calico.api.validation;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.List;
import java.util.Optional;

/** Field checks for IP addresses and CIDRs, reporting against the field's path. */
final class Cidrs {

    private Cidrs() {
    }

    /** Each entry a CIDR or a bare address; host bits may be set (as Calico's {@code cidr} check). */
    static void cidrsOrIps(List<String> values, FieldPath path, Errors errors) {
        for (int i = 0; i < values.size(); i++) {
            cidrOrIp(values.get(i), path.index(i), errors);
        }
    }

    static Optional<Cidr> cidrOrIp(String value, FieldPath path, Errors errors) {
        Optional<Cidr> c = Cidr.tryParseCidrOrIp(value);
        if (c.isEmpty()) {
            errors.add(path, "invalid CIDR or IP address \"" + value + "\"");
        }
        return c;
    }

    /** A bare IP address of the given version (0 for either). */
    static Optional<IpAddress> ip(String value, int version, FieldPath path, Errors errors) {
        Optional<IpAddress> ip = IpAddress.tryParse(value);
        if (ip.isEmpty()) {
            errors.add(path, "invalid IP address \"" + value + "\"");
        } else if (version != 0 && ip.get().version() != version) {
            errors.add(path, "must be an IPv" + version + " address");
            return Optional.empty();
        }
        return ip;
    }
}
