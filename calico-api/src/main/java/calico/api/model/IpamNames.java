package calico.api.model;

import calico.api.net.Cidr;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Names of the IPAM resources, as Calico's kubernetes datastore derives them: a block is its
 * CIDR with {@code .}, {@code :} and {@code /} replaced by {@code -} ({@code 10.0.0.0/26} →
 * {@code 10-0-0-0-26}); an affinity is {@code <node>-<block name>} (shortened with a hash when
 * 253 characters or more); a handle is its handle ID in lower case.
 */
public final class IpamNames {

    /** The only name of the {@link IPAMConfiguration}. */
    public static final String IPAM_CONFIG_NAME = "default";

    private static final int MAX = 253;

    private IpamNames() {
    }

    /** {@return the resource name of the block {@code cidr}} (the network, host bits cleared). */
    public static String blockName(Cidr cidr) {
        return cidr.network().toString().replace('.', '-').replace(':', '-').replace('/', '-');
    }

    /** {@return the resource name of {@code node}'s affinity to block {@code cidr}}. */
    public static String affinityName(String node, Cidr cidr) {
        String block = blockName(cidr);
        String name = node + "-" + block;
        if (name.length() < MAX) {
            return name;
        }
        // As Calico: keep the block name whole, cut the node, and add 11 hex digits of a hash of both.
        String cut = node.substring(0, Math.max(0, MAX - 1 - block.length() - 13));
        return cut + "-" + block + "-" + sha256Hex(node + "+" + block).substring(0, 11);
    }

    /** {@return the resource name of a handle}: the ID in lower case. */
    public static String handleName(String handleId) {
        return handleId.toLowerCase(Locale.ROOT);
    }

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }
}
