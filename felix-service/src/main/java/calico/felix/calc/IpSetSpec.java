package calico.felix.calc;

import calico.api.selector.Selector;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * What an IP set holds, from which its stable ID is derived: a selector set is named by the
 * selector's {@link Selector#uniqueId()} (so equivalent spellings share one set, as in Calico); a
 * named-port set by a hash of the selector, protocol and port name; a service set (a rule's
 * {@code services} match) by a hash of the service's {@code namespace/name}, with prefix
 * {@code svc:} when it holds the endpoints' (address, protocol, port) and {@code svcnoport:} when
 * only their addresses (Calico's two kinds).
 *
 * @param selector for selector and named-port sets; {@code null} for service sets
 * @param protocol for named-port sets, lower-case; {@code null} otherwise
 * @param portName for named-port sets; {@code null} otherwise
 * @param service  for service sets, {@code namespace/name}; {@code null} otherwise
 */
record IpSetSpec(String id, IpSetType type, Selector selector, String protocol, String portName, String service) {

    private static final String SERVICE_PORTS = "svc:";
    private static final String SERVICE_ADDRESSES = "svcnoport:";

    static IpSetSpec selector(Selector s) {
        return new IpSetSpec(s.uniqueId(), IpSetType.NET, s, null, null, null);
    }

    static IpSetSpec namedPort(Selector s, String protocol, String portName) {
        String id = "n:" + hash("n:" + protocol + ":" + portName + ":" + s.canonical());
        return new IpSetSpec(id, IpSetType.IP_AND_PORT, s, protocol, portName, null);
    }

    /**
     * The endpoints of Service {@code namespace/name}: (address, protocol, port) members when
     * {@code withPorts} (a destination match), addresses alone otherwise (a source match).
     */
    static IpSetSpec service(String namespace, String name, boolean withPorts) {
        String svc = namespace + "/" + name;
        String prefix = withPorts ? SERVICE_PORTS : SERVICE_ADDRESSES;
        return new IpSetSpec(prefix + hash(prefix + svc), withPorts ? IpSetType.IP_AND_PORT : IpSetType.NET, null,
                null, null, svc);
    }

    /** {@return whether {@code id} names a service set} (the other IDs start {@code s:} or {@code n:}). */
    static boolean isService(String id) {
        return id.startsWith(SERVICE_PORTS) || id.startsWith(SERVICE_ADDRESSES);
    }

    private static String hash(String key) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-224").digest(key.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK must provide SHA-224", e);
        }
    }
}
