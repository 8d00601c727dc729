package calico.cni.config;

import calico.cni.spec.CniError;
import java.util.Locale;

/** Calico's {@code log_level} values (logrus names, any case); {@code none} turns logging off. */
public enum LogLevel {
    DEBUG, INFO, WARNING, ERROR, NONE;

    /** {@return the level named {@code s}}; unknown names are refused naming {@code log_level}. */
    public static LogLevel parse(String s) {
        String v = s == null || s.isEmpty() ? "info" : s.toLowerCase(Locale.ROOT);
        return switch (v) {
            case "debug", "trace" -> DEBUG;
            case "info" -> INFO;
            case "warning", "warn" -> WARNING;
            case "error", "fatal", "panic" -> ERROR;
            case "none" -> NONE;
            default -> throw new CniError(CniError.INVALID_CONFIG,
                    "log_level: '" + s + "' is not debug, info, warning, error or none");
        };
    }
}
