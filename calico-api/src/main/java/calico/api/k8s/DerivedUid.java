package calico.api.k8s;

/**
 * Derives the UID of a Calico resource from the UID of the Kubernetes object it mirrors, as
 * Calico does: the same input always gives the same output, yet the two objects never share a
 * UID (two objects with one UID confuse Kubernetes garbage collection). The bits of every byte
 * are reversed except the version byte (6) and the variant byte (8), so a v4 UUID stays a
 * valid v4 UUID.
 */
public final class DerivedUid {

    private DerivedUid() {
    }

    /** {@return the derived UID}, lower-case hyphenated; throws for text that is not a UUID. */
    public static String of(String uid) {
        byte[] b = parse(uid);
        for (int i = 0; i < 16; i++) {
            if (i != 6 && i != 8) {
                b[i] = (byte) (Integer.reverse(b[i] & 0xff) >>> 24);
            }
        }
        return format(b);
    }

    private static byte[] parse(String uid) {
        String hex = uid == null ? "" : uid.replace("-", "");
        boolean shaped = uid != null && uid.length() == 36 && uid.charAt(8) == '-' && uid.charAt(13) == '-'
                && uid.charAt(18) == '-' && uid.charAt(23) == '-';
        if (!shaped || hex.length() != 32 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException("\"" + uid + "\" is not a UUID");
        }
        byte[] out = new byte[16];
        for (int i = 0; i < 16; i++) {
            out[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private static String format(byte[] b) {
        StringBuilder sb = new StringBuilder(36);
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                sb.append('-');
            }
            sb.append(Character.forDigit((b[i] >>> 4) & 0xf, 16)).append(Character.forDigit(b[i] & 0xf, 16));
        }
        return sb.toString();
    }

    /**
     * {@return the derived UID of a Kubernetes object's {@code metadata.uid}}, {@code null} when it has none.
     * @throws KubernetesConversionException naming {@code metadata.uid} of {@code what} when it is malformed
     */
    static String ofObject(String what, KubeObjectMeta m) {
        if (m.uid() == null || m.uid().isEmpty()) {
            return null;
        }
        try {
            return of(m.uid());
        } catch (IllegalArgumentException e) {
            throw new KubernetesConversionException(what, "metadata.uid", e.getMessage());
        }
    }
}
