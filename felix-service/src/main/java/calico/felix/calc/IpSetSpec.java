package calico.felix.calc;

import calico.api.selector.Selector;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * What an IP set holds, from which its stable ID is derived: a selector set is named by the
 * selector's {@link Selector#uniqueId()} (so equivalent spellings share one set, as in Calico); a
 * named-port set by a hash of the selector, protocol and port name.
 *
 * @param protocol for named-port sets, lower-case; {@code null} for selector sets
 * @param portName for named-port sets; {@code null} for selector sets
 */
record IpSetSpec(String id, IpSetType type, Selector selector, String protocol, String portName) {

    static IpSetSpec selector(Selector s) {
        return new IpSetSpec(s.uniqueId(), IpSetType.NET, s, null, null);
    }

    static IpSetSpec namedPort(Selector s, String protocol, String portName) {
        String key = "n:" + protocol + ":" + portName + ":" + s.canonical();
        try {
            byte[] h = MessageDigest.getInstance("SHA-224").digest(key.getBytes(StandardCharsets.UTF_8));
            String id = "n:" + Base64.getUrlEncoder().withoutPadding().encodeToString(h);
            return new IpSetSpec(id, IpSetType.IP_AND_PORT, s, protocol, portName);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK must provide SHA-224", e);
        }
    }
}
