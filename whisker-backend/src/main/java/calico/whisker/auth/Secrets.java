package calico.whisker.auth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** Constant-time comparison: both sides are hashed first, so neither content nor length leaks through timing. */
final class Secrets {

    private Secrets() {
    }

    static byte[] digest(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean matches(byte[] expectedDigest, String presented) {
        return MessageDigest.isEqual(expectedDigest, digest(presented));
    }

    static String read(String file, String env) {
        try {
            return Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException(env + ": cannot read " + file + ": " + e.getMessage());
        }
    }

    /** The credential after a scheme ("Bearer xyz" → "xyz"), or null when the header has another scheme. */
    static String credential(String authorization, String scheme) {
        if (authorization == null || authorization.length() <= scheme.length()
                || !authorization.regionMatches(true, 0, scheme, 0, scheme.length())
                || authorization.charAt(scheme.length()) != ' ') {
            return null;
        }
        String c = authorization.substring(scheme.length() + 1).trim();
        return c.isEmpty() ? null : c;
    }
}
