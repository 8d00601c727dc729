package calico.cni.spec;

import java.util.List;

/** The specification versions this plugin speaks, and which commands each allows. */
public final class CniVersions {
    public static final String LATEST = "1.0.0";
    public static final List<String> SUPPORTED = List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");

    private CniVersions() {
    }

    /** Refuses a configuration version this plugin cannot answer in (code 1). */
    public static void check(String version) {
        if (version == null || version.isEmpty()) {
            throw new CniError(CniError.INVALID_CONFIG, "cniVersion: is required");
        }
        if (!SUPPORTED.contains(version)) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION,
                    "cniVersion: " + version + " is not supported", "supported versions: " + SUPPORTED);
        }
    }

    /** {@return whether results of this version drop the per-IP {@code version} field} (1.0.0 and up). */
    public static boolean isOneDotX(String version) {
        return version.startsWith("1.");
    }

    /** CHECK exists from 0.4.0 on. */
    public static boolean allowsCheck(String version) {
        return !version.startsWith("0.3.");
    }
}
