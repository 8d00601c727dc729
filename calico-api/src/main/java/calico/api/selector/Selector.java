package calico.api.selector;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A parsed Calico label selector: immutable and safe to share between threads.
 *
 * <p>Two selectors are equal when their canonical forms are equal; the canonical form is a
 * fixed point ({@code parse(s.canonical()).canonical().equals(s.canonical())}) and selectors
 * with equal canonical forms match exactly the same label sets. {@link #uniqueId()} is
 * derived from it, so IP sets keyed by it are shared by equivalent spellings.
 */
public final class Selector {

    private static final Selector ALL = new Selector(new Expr.All());

    private final Expr root;
    private final String canonical;
    private final Set<String> labelKeys;
    /** Computed on first use; a benign race, as String is immutable. */
    private String uniqueId;

    private Selector(Expr root) {
        this.root = root;
        StringBuilder sb = new StringBuilder();
        root.appendCanonical(sb);
        this.canonical = sb.toString();
        Set<String> keys = new TreeSet<>();
        root.collectLabelKeys(keys);
        this.labelKeys = Collections.unmodifiableSet(keys);
    }

    /**
     * Parses selector text. {@code null}, the empty string and blanks mean {@code all()}, as
     * in Calico.
     *
     * @throws SelectorParseException with the 0-based position and what was expected there
     */
    public static Selector parse(String text) {
        if (text == null || text.isEmpty()) {
            return ALL;
        }
        return new Selector(SelectorParser.parse(text));
    }

    /** {@return a selector for an already built expression tree} */
    public static Selector of(Expr root) {
        return new Selector(Objects.requireNonNull(root, "root"));
    }

    /** {@return the selector that matches everything, {@code all()}} */
    public static Selector all() {
        return ALL;
    }

    /**
     * {@return whether the labels satisfy this selector}. A key mapped to {@code null} counts
     * as absent. Allocation-free; callers with computed labels can pass any {@link Map} whose
     * {@code get} resolves them.
     */
    public boolean matches(Map<String, String> labels) {
        return root.matches(labels);
    }

    /** {@return Calico's normalised form of this selector} (its {@code String()} of the AST). */
    public String canonical() {
        return canonical;
    }

    /**
     * {@return Calico's {@code UniqueID()}}: {@code "s:"} followed by the unpadded base64url
     * SHA-224 of {@code "s:" + canonical()} (38 characters after the prefix).
     */
    public String uniqueId() {
        String id = uniqueId;
        if (id == null) {
            id = "s:" + Base64.getUrlEncoder().withoutPadding().encodeToString(sha224("s:" + canonical));
            uniqueId = id;
        }
        return id;
    }

    /** {@return the label keys this selector tests, sorted} (empty for {@code all()}). */
    public Set<String> labelKeys() {
        return labelKeys;
    }

    /** {@return the expression tree} */
    public Expr root() {
        return root;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Selector s && s.canonical.equals(canonical);
    }

    @Override
    public int hashCode() {
        return canonical.hashCode();
    }

    @Override
    public String toString() {
        return canonical;
    }

    private static byte[] sha224(String s) {
        try {
            return MessageDigest.getInstance("SHA-224").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK must provide SHA-224", e);
        }
    }
}
