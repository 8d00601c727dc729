package calico.cni.spec;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A failure reported to the runtime as the CNI specification's error object
 * {@code {"cniVersion","code","msg","details"}} on stdout with a non-zero exit status.
 * Codes 1–99 are the specification's; 100 and up are this plugin's.
 */
public final class CniError extends RuntimeException {
    public static final int INCOMPATIBLE_VERSION = 1;
    public static final int UNSUPPORTED_FIELD = 2;
    public static final int UNKNOWN_CONTAINER = 3;
    public static final int INVALID_ENVIRONMENT = 4;
    public static final int IO_FAILURE = 5;
    public static final int DECODE_FAILURE = 6;
    public static final int INVALID_CONFIG = 7;
    public static final int TRY_AGAIN_LATER = 11;
    public static final int NOT_AVAILABLE = 50;
    /** Plugin-specific: IPAM could not give an address (pool exhausted, no pool). */
    public static final int IPAM_FAILURE = 100;
    /** Plugin-specific: the kernel refused a netlink step. */
    public static final int NETLINK_FAILURE = 101;
    /** Plugin-specific: the datastore refused or could not be reached. */
    public static final int DATASTORE_FAILURE = 102;
    /** Plugin-specific: CHECK found the container's networking not as the result says. */
    public static final int CHECK_FAILED = 103;
    /** Plugin-specific: an internal error. */
    public static final int INTERNAL = 999;

    private final int code;
    private final String details;

    public CniError(int code, String msg, String details) {
        super(msg);
        this.code = code;
        this.details = details == null ? "" : details;
    }

    public CniError(int code, String msg) {
        this(code, msg, "");
    }

    public int code() {
        return code;
    }

    public String details() {
        return details;
    }

    /** {@return the error object for {@code cniVersion}} */
    public ObjectNode toJson(ObjectMapper json, String cniVersion) {
        ObjectNode o = json.createObjectNode();
        o.put("cniVersion", cniVersion == null || cniVersion.isEmpty() ? CniVersions.LATEST : cniVersion);
        o.put("code", code);
        o.put("msg", getMessage());
        if (!details.isEmpty()) {
            o.put("details", details);
        }
        return o;
    }
}
