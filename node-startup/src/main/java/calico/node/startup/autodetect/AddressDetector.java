package calico.node.startup.autodetect;

import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Finds the node's address with an {@link AutodetectionMethod}, as Calico's autodetection does:
 * interfaces are tried from the highest index down (Calico's order), each one's addresses in the
 * kernel's order, and only global unicast addresses count (not loopback, link-local, multicast or
 * unspecified). The answer carries the subnet's prefix length of the interface address
 * ({@code 10.0.0.5/24}), which felix and BIRD use for {@code CrossSubnet} decisions.
 */
public final class AddressDetector {

    private final HostInterfaces interfaces;
    private final KubernetesNodes kubernetes;

    public AddressDetector(HostInterfaces interfaces, KubernetesNodes kubernetes) {
        this.interfaces = Objects.requireNonNull(interfaces, "interfaces");
        this.kubernetes = Objects.requireNonNull(kubernetes, "kubernetes");
    }

    /**
     * {@return the IPv{@code version} address {@code method} finds}
     *
     * @param kubernetesNodeName the Kubernetes Node to read for {@code kubernetes-internal-ip}
     */
    public Detection detect(AutodetectionMethod method, int version, String kubernetesNodeName) {
        if (method instanceof AutodetectionMethod.FirstFound) {
            return firstFound(List.of(), AutodetectionMethod.DEFAULT_INTERFACES_TO_EXCLUDE, List.of(), version);
        }
        if (method instanceof AutodetectionMethod.Interface i) {
            return firstFound(i.regexes(), List.of(), List.of(), version);
        }
        if (method instanceof AutodetectionMethod.SkipInterface s) {
            List<String> exclude = new ArrayList<>(AutodetectionMethod.DEFAULT_INTERFACES_TO_EXCLUDE);
            exclude.addAll(s.regexes());
            return firstFound(List.of(), exclude, List.of(), version);
        }
        if (method instanceof AutodetectionMethod.Cidrs c) {
            return firstFound(List.of(), List.of(), c.cidrs(), version);
        }
        if (method instanceof AutodetectionMethod.CanReach r) {
            return canReach(r.destination(), version);
        }
        if (method instanceof AutodetectionMethod.KubernetesInternalIp) {
            return kubernetesInternalIp(kubernetesNodeName, version);
        }
        throw new IllegalStateException("unknown autodetection method " + method);
    }

    /**
     * {@return {@code ip} with the prefix length of the host interface that holds it}, or empty when
     * no interface does (Calico's {@code GetLocalCIDR}).
     */
    public Optional<Cidr> onHost(IpAddress ip) {
        for (HostInterface i : interfaces.list()) {
            for (Cidr c : i.cidrs(ip.version())) {
                if (c.address().equals(ip)) {
                    return Optional.of(c);
                }
            }
        }
        return Optional.empty();
    }

    /**
     * {@return every IPv{@code version} address on any host interface}, loopback and link-local
     * included (what a default pool must not contain: Calico's {@code GetDefaultIPv4Pool} lists them all).
     */
    public List<IpAddress> hostAddresses(int version) {
        return interfaces.list().stream().flatMap(i -> i.cidrs(version).stream()).map(Cidr::address).toList();
    }

    /** {@return every interface but those Calico never reports} (the Node's {@code interfaces}). */
    public List<HostInterface> reportable(int... versions) {
        Pattern exclude = anyOf(AutodetectionMethod.DEFAULT_INTERFACES_TO_EXCLUDE);
        List<HostInterface> out = new ArrayList<>();
        for (HostInterface i : interfaces.list()) {
            if (!exclude.matcher(i.name()).find()) {
                List<Cidr> cidrs = i.cidrs().stream()
                        .filter(c -> Arrays.stream(versions).anyMatch(v -> v == c.version())).toList();
                out.add(new HostInterface(i.index(), i.name(), cidrs));
            }
        }
        return out;
    }

    private Detection firstFound(List<String> include, List<String> exclude, List<Cidr> within, int version) {
        Pattern in = include.isEmpty() ? null : anyOf(include);
        Pattern out = exclude.isEmpty() ? null : anyOf(exclude);
        List<HostInterface> all = interfaces.list();
        boolean anyInterface = false;
        for (int k = all.size() - 1; k >= 0; k--) {
            HostInterface i = all.get(k);
            if ((in != null && !in.matcher(i.name()).find()) || (out != null && out.matcher(i.name()).find())) {
                continue;
            }
            anyInterface = true;
            for (Cidr c : i.cidrs(version)) {
                if (globalUnicast(c.address()) && (within.isEmpty() || within.stream().anyMatch(w -> w.contains(c.address())))) {
                    return Detection.found(c, i.name());
                }
            }
        }
        return Detection.none(anyInterface ? "no valid IPv" + version + " addresses found on the host interfaces"
                : "no valid host interfaces found");
    }

    private Detection canReach(String destination, int version) {
        InetAddress target;
        try {
            target = Arrays.stream(InetAddress.getAllByName(destination))
                    .filter(a -> (a instanceof Inet4Address) == (version == 4)).findFirst().orElse(null);
        } catch (IOException e) {
            return Detection.none("cannot resolve " + destination + ": " + e.getMessage());
        }
        if (target == null) {
            return Detection.none(destination + " has no IPv" + version + " address");
        }
        Optional<IpAddress> source = interfaces.sourceAddress(target);
        if (source.isEmpty()) {
            return Detection.none("no route to " + destination);
        }
        IpAddress local = source.get();
        for (HostInterface i : interfaces.list()) {
            for (Cidr c : i.cidrs(version)) {
                if (c.address().equals(local)) {
                    return Detection.found(c, i.name());
                }
            }
        }
        return Detection.none("the address " + local + " used to reach " + destination
                + " is on no host interface");
    }

    private Detection kubernetesInternalIp(String nodeName, int version) {
        Optional<List<String>> ips = kubernetes.internalIps(nodeName);
        if (ips.isEmpty()) {
            return Detection.none("kubernetes-internal-ip needs a Kubernetes cluster (KUBECONFIG), and there is none");
        }
        for (String text : ips.get()) {
            Optional<IpAddress> ip = IpAddress.tryParse(text);
            if (ip.isPresent() && ip.get().version() == version) {
                return onHost(ip.get()).map(c -> Detection.found(c, null)).orElseGet(() -> Detection.none(
                        "the Kubernetes Node " + nodeName + "'s InternalIP " + text + " is on no host interface"));
            }
        }
        return Detection.none("the Kubernetes Node " + nodeName + " has no IPv" + version + " InternalIP");
    }

    /** Go's {@code IsGlobalUnicast}: not unspecified, loopback, multicast, link-local or broadcast. */
    static boolean globalUnicast(IpAddress ip) {
        byte[] b = ip.toBytes();
        if (ip.version() == 4) {
            int first = b[0] & 0xFF;
            int second = b[1] & 0xFF;
            boolean unspecified = ip.equals(IpAddress.parse("0.0.0.0"));
            boolean broadcast = ip.equals(IpAddress.parse("255.255.255.255"));
            return !unspecified && !broadcast && first != 127 && (first & 0xF0) != 0xE0
                    && !(first == 169 && second == 254);
        }
        boolean unspecified = ip.equals(IpAddress.parse("::"));
        boolean loopback = ip.equals(IpAddress.parse("::1"));
        boolean multicast = (b[0] & 0xFF) == 0xFF;
        boolean linkLocal = (b[0] & 0xFF) == 0xFE && (b[1] & 0xC0) == 0x80;
        return !unspecified && !loopback && !multicast && !linkLocal;
    }

    private static Pattern anyOf(List<String> regexes) {
        return Pattern.compile("(" + String.join(")|(", regexes) + ")");
    }
}
