package calico.felix.dataplane.iptables;

import calico.dataplane.iptables.Rule;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * How the driver knows its rules again without parsing {@code -save}'s form of them (Calico's
 * way): every rule it writes in a chain of its own carries {@code -m comment --comment
 * cali:<hash>} first, the hash covering the chain's name, the hash of the rule before it and the
 * rule's words. A chain read back is ours, unchanged, exactly when the hashes {@code -save}
 * prints for it are the ones our rendering gives (iptables-dataplane.md invariant 6). Hook jumps
 * in kernel chains carry no hash (they are recognised by their whole form).
 */
final class RuleHashes {

    static final String PREFIX = "cali:";
    private static final String SAVED = "-m comment --comment ";
    /** 16 characters of base64url: 96 bits, as long as Calico's. */
    private static final int LENGTH = 16;

    private RuleHashes() {
    }

    /** {@return the hash of each rule of {@code chain}, in order} */
    static List<String> of(Chain chain) {
        MessageDigest sha = sha256();
        List<String> out = new ArrayList<>(chain.rules().size());
        String previous = chain.name();
        for (Rule r : chain.rules()) {
            sha.update(previous.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            for (String w : r.args()) {
                sha.update(w.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            previous = Base64.getUrlEncoder().withoutPadding().encodeToString(sha.digest()).substring(0, LENGTH);
            out.add(previous);
        }
        return out;
    }

    /** {@return {@code chain}'s rules as written: each with its hash comment first} */
    static List<Rule> tagged(Chain chain) {
        List<String> hashes = of(chain);
        List<Rule> out = new ArrayList<>(hashes.size());
        for (int i = 0; i < hashes.size(); i++) {
            out.add(chain.rules().get(i).withComment(PREFIX + hashes.get(i)));
        }
        return out;
    }

    /** {@return the hash a {@code -save} rule line carries in its first comment}, or null when it carries none of ours */
    static String savedHash(String line) {
        // -save prints the address, interface and protocol part before every match, so our
        // comment, the first match we wrote, is the first comment match in the line
        int at = line.startsWith(SAVED) ? 0 : line.indexOf(" " + SAVED);
        if (at < 0) {
            return null;
        }
        int start = at + (at == 0 ? 0 : 1) + SAVED.length();
        start += line.startsWith("\"", start) ? 1 : 0; // -save quotes a word with ':'
        if (!line.startsWith(PREFIX, start)) {
            return null;
        }
        start += PREFIX.length();
        int end = start;
        while (end < line.length() && line.charAt(end) != ' ' && line.charAt(end) != '"') {
            end++;
        }
        return line.substring(start, end);
    }

    /** Whether the rules {@code -save} printed for a chain are {@code ours}, rule for rule, by their hashes. */
    static boolean matches(List<String> saved, Chain ours) {
        if (saved.size() != ours.rules().size()) {
            return false;
        }
        List<String> hashes = of(ours);
        for (int i = 0; i < saved.size(); i++) {
            if (!hashes.get(i).equals(savedHash(saved.get(i)))) {
                return false;
            }
        }
        return true;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
