package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * How start-up finds the node's address when {@code IP}/{@code IP6} asks for autodetection
 * ({@code IP_AUTODETECTION_METHOD}, {@code IP6_AUTODETECTION_METHOD}), with Calico's names:
 * {@code first-found}, {@code can-reach=DEST}, {@code interface=REGEX[,REGEX]},
 * {@code skip-interface=REGEX[,REGEX]}, {@code cidr=CIDR[,CIDR]}, {@code kubernetes-internal-ip}.
 * Parsed once, when the settings are bound, so a bad method fails start-up naming it.
 */
public sealed interface AutodetectionMethod {

    /** Calico's list of interfaces that never carry the node's address (first-found, skip-interface). */
    List<String> DEFAULT_INTERFACES_TO_EXCLUDE = List.of("^docker.*", "^cbr.*", "^dummy.*", "^podman.*",
            "^virbr.*", "^lxcbr.*", "^veth.*", "^lo", "^cali.*", "^tunl.*", "^flannel.*", "^kube-ipvs.*", "^cni.*",
            "^vxlan\\.calico.*", "^vxlan-v6\\.calico.*", "^wireguard\\.cali.*", "^wg-v6\\.cali.*");

    /** The first global unicast address on an interface not in the default exclusion list. */
    record FirstFound() implements AutodetectionMethod {
        @Override
        public String text() {
            return "first-found";
        }
    }

    /** The source address the kernel picks to reach {@code destination} (an address or a host name). */
    record CanReach(String destination) implements AutodetectionMethod {
        @Override
        public String text() {
            return "can-reach=" + destination;
        }
    }

    /** The first global unicast address on an interface whose name matches one of the expressions. */
    record Interface(List<String> regexes) implements AutodetectionMethod {
        public Interface {
            regexes = List.copyOf(regexes);
        }

        @Override
        public String text() {
            return "interface=" + String.join(",", regexes);
        }
    }

    /** As first-found, also skipping interfaces whose name matches one of the expressions. */
    record SkipInterface(List<String> regexes) implements AutodetectionMethod {
        public SkipInterface {
            regexes = List.copyOf(regexes);
        }

        @Override
        public String text() {
            return "skip-interface=" + String.join(",", regexes);
        }
    }

    /** The first global unicast address, on any interface, inside one of the CIDRs. */
    record Cidrs(List<Cidr> cidrs) implements AutodetectionMethod {
        public Cidrs {
            cidrs = List.copyOf(cidrs);
        }

        @Override
        public String text() {
            return "cidr=" + String.join(",", cidrs.stream().map(Cidr::toString).toList());
        }
    }

    /** The Kubernetes Node's {@code InternalIP} of that IP version, which must be on a host interface. */
    record KubernetesInternalIp() implements AutodetectionMethod {
        @Override
        public String text() {
            return "kubernetes-internal-ip";
        }
    }

    /** {@return the method as Calico spells it} */
    String text();

    /**
     * {@return the method {@code text} names}; empty is {@code first-found}, as in Calico.
     *
     * @param setting how errors name the setting, e.g. {@code node.ip-autodetection-method (IP_AUTODETECTION_METHOD)}
     * @throws IllegalArgumentException naming the setting, the method and the reason
     */
    static AutodetectionMethod parse(String text, String setting) {
        String t = text == null ? "" : text.trim();
        if (t.isEmpty() || t.equals("first-found")) {
            return new FirstFound();
        }
        if (t.startsWith("can-reach=")) {
            String dest = t.substring("can-reach=".length()).trim();
            if (dest.isEmpty()) {
                throw bad(setting, t, "can-reach= needs a destination address or host name");
            }
            return new CanReach(dest);
        }
        if (t.startsWith("interface=")) {
            return new Interface(regexes(setting, t, t.substring("interface=".length())));
        }
        if (t.startsWith("skip-interface=")) {
            return new SkipInterface(regexes(setting, t, t.substring("skip-interface=".length())));
        }
        if (t.startsWith("cidr=")) {
            List<Cidr> cidrs = split(t.substring("cidr=".length())).stream().map(c -> Cidr.tryParse(c)
                    .orElseThrow(() -> bad(setting, t, "\"" + c + "\" is not a CIDR"))).toList();
            if (cidrs.isEmpty()) {
                throw bad(setting, t, "cidr= needs at least one CIDR");
            }
            return new Cidrs(cidrs);
        }
        if (t.equals("kubernetes-internal-ip")) {
            return new KubernetesInternalIp();
        }
        throw bad(setting, t, null);
    }

    private static List<String> regexes(String setting, String method, String list) {
        List<String> out = split(list);
        if (out.isEmpty()) {
            throw bad(setting, method, "needs at least one interface name expression");
        }
        for (String r : out) {
            try {
                Pattern.compile(r);
            } catch (PatternSyntaxException e) {
                throw bad(setting, method, "\"" + r + "\" is not a regular expression: " + e.getDescription());
            }
        }
        return out;
    }

    private static List<String> split(String list) {
        return Arrays.stream(list.trim().split("\\s*,\\s*")).filter(s -> !s.isEmpty()).toList();
    }

    private static IllegalArgumentException bad(String setting, String method, String reason) {
        return new IllegalArgumentException(setting + ": invalid IP autodetection method \"" + method + "\": "
                + (reason != null ? reason : "not one of first-found, can-reach=DEST, interface=REGEX, "
                + "skip-interface=REGEX, cidr=CIDR[,CIDR], kubernetes-internal-ip"));
    }
}
