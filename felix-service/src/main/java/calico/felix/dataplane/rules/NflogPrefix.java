package calico.felix.dataplane.rules;

import calico.api.model.ResourceKind;
import calico.felix.calc.PolicyId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The NFLOG prefix of a rule hit, in Calico's scheme: {@code AODIII|ID} with A the action
 * ({@code A}llow, {@code D}eny, {@code P}ass), O the owner ({@code P}olicy or p{@code R}ofile),
 * D the direction ({@code I}ngress, {@code E}gress), III the rule index, ID the policy or profile
 * ({@code np/<ns>/<name>}, {@code gnp/<name>}, staged: {@code snp},
 * {@code sgnp}, {@code sknp}; profiles {@code pro/<name>}). End of tier: {@code DPI|<tier>} (or
 * {@code PPI|<tier>} for a tier whose default is Pass); no profile accepted: {@code DRI}; a listed
 * policy that is missing: {@code DPI|<id>}.
 *
 * <p>The kernel keeps 63 bytes of a prefix. A prefix of 63 bytes or more keeps its first and last
 * ten characters around a hash of the whole ({@code first10 + hash42 + "_" + last10}, 63 bytes),
 * so a user cannot forge a hashed entry with a 63-byte name; hashed prefixes are decoded through a
 * {@link HitTable}, never parsed. Pure functions: renderers encode, the collector decodes.
 */
public final class NflogPrefix {

    /** NFLOG group of inbound hits (workload ingress, host endpoint ingress). */
    public static final int INBOUND_GROUP = 1;
    /** NFLOG group of outbound hits. */
    public static final int OUTBOUND_GROUP = 2;
    /** Prefix bytes the kernel keeps (64 with the terminator). */
    static final int MAX = 63;
    private static final int KEEP_HEAD = 10;
    private static final int KEEP_TAIL = 10;
    private static final int HASH_LEN = MAX - KEEP_HEAD - KEEP_TAIL - 1;

    private NflogPrefix() {
    }

    /** The verdict a hit records. */
    public enum Verdict {
        ALLOW('A'), DENY('D'), PASS('P');

        final char code;

        Verdict(char code) {
            this.code = code;
        }

        static Verdict of(char c) {
            for (Verdict v : values()) {
                if (v.code == c) {
                    return v;
                }
            }
            return null;
        }
    }

    public static int group(boolean inbound) {
        return inbound ? INBOUND_GROUP : OUTBOUND_GROUP;
    }

    /** A policy rule with an action. */
    public static String policyRule(Verdict v, boolean inbound, int index, PolicyId id) {
        return hashIfLong("" + v.code + 'P' + dir(inbound) + index + '|' + policyId(id));
    }

    /** A profile rule with an action. */
    public static String profileRule(Verdict v, boolean inbound, int index, String profile) {
        return hashIfLong("" + v.code + 'R' + dir(inbound) + index + '|' + profileId(profile));
    }

    /** The end of a tier: Deny (no policy decided) or Pass (the tier's default action is Pass). */
    public static String endOfTier(Verdict v, boolean inbound, String tier) {
        return hashIfLong("" + v.code + 'P' + dir(inbound) + '|' + tier);
    }

    /** A policy listed for the endpoint that the dataplane does not hold (fail closed). */
    public static String missingPolicy(boolean inbound, PolicyId id) {
        return hashIfLong("DP" + dir(inbound) + '|' + policyId(id));
    }

    /** No profile accepted: the endpoint chain's final deny. */
    public static String noProfileMatched(boolean inbound) {
        return "DR" + dir(inbound);
    }

    /** Calico's policy ID string: kind abbreviation, namespace when namespaced, name. */
    public static String policyId(PolicyId id) {
        String kind = kindAbbrev(id.kind());
        return id.namespace() == null ? kind + "/" + id.name() : kind + "/" + id.namespace() + "/" + id.name();
    }

    public static String profileId(String name) {
        return "pro/" + name;
    }

    static String kindAbbrev(ResourceKind k) {
        return switch (k) {
            case GLOBAL_NETWORK_POLICY -> "gnp";
            case NETWORK_POLICY -> "np";
            case STAGED_GLOBAL_NETWORK_POLICY -> "sgnp";
            case STAGED_NETWORK_POLICY -> "snp";
            case STAGED_KUBERNETES_NETWORK_POLICY -> "sknp";
            default -> k.name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static char dir(boolean inbound) {
        return inbound ? 'I' : 'E';
    }

    /** Whether {@code prefix} is a hashed one (only a {@link HitTable} can decode it). */
    public static boolean hashed(String prefix) {
        return prefix.length() >= MAX; // every prefix of 63 bytes or more is hashed to exactly 63
    }

    static String hashIfLong(String prefix) {
        if (prefix.getBytes(StandardCharsets.UTF_8).length < MAX) {
            return prefix;
        }
        // Cut on characters; IDs are DNS names (ASCII), so characters are bytes in practice.
        String head = prefix.substring(0, KEEP_HEAD);
        String tail = prefix.substring(prefix.length() - KEEP_TAIL);
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(prefix.getBytes(StandardCharsets.UTF_8));
            String h = Base64.getUrlEncoder().withoutPadding().encodeToString(d).substring(0, HASH_LEN);
            return head + h + "_" + tail;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always present", e);
        }
    }
}
