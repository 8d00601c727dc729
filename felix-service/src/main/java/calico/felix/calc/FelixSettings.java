package calico.felix.calc;

import calico.api.model.FelixConfigurationSpec.ProtoPort;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The most used settings of a resolved {@link DataplaneUpdate.ConfigUpdate}, typed. Parsed
 * with the same rules the resolver used to accept the text, so {@link #from} never fails on a
 * map the resolver emitted; on any other map a missing or invalid setting falls back to
 * Calico's default.
 *
 * @param ipipEnabled  empty when unset: Felix then decides from the IP pools' modes
 * @param vxlanEnabled empty when unset: likewise
 * @param ipipMtu      0 means "detect from the host's MTU" (likewise the other MTUs)
 */
public record FelixSettings(
        String interfacePrefix,
        boolean healthEnabled,
        String healthHost,
        int healthPort,
        boolean prometheusMetricsEnabled,
        int prometheusMetricsPort,
        String logSeverityScreen,
        String defaultEndpointToHostAction,
        String chainInsertMode,
        String iptablesBackend,
        String nftablesMode,
        boolean bpfEnabled,
        List<ProtoPort> failsafeInboundHostPorts,
        List<ProtoPort> failsafeOutboundHostPorts,
        Optional<Boolean> ipipEnabled,
        int ipipMtu,
        Optional<Boolean> vxlanEnabled,
        int vxlanMtu,
        int vxlanPort,
        int vxlanVni,
        boolean wireguardEnabled,
        int wireguardMtu,
        int wireguardListeningPort,
        Duration routeRefreshInterval,
        Duration iptablesRefreshInterval,
        String iptablesLockFilePath,
        Duration iptablesLockTimeout,
        Duration iptablesLockProbeInterval,
        Duration reportingInterval,
        Duration reportingTtl) {

    public FelixSettings {
        failsafeInboundHostPorts = List.copyOf(failsafeInboundHostPorts);
        failsafeOutboundHostPorts = List.copyOf(failsafeOutboundHostPorts);
    }

    /** {@return the settings of a resolved configuration map} (as carried by a ConfigUpdate). */
    public static FelixSettings from(Map<String, String> values) {
        Reader r = new Reader(values);
        return new FelixSettings(
                r.text("interfacePrefix"),
                r.bool("healthEnabled"),
                r.text("healthHost"),
                r.integer("healthPort"),
                r.bool("prometheusMetricsEnabled"),
                r.integer("prometheusMetricsPort"),
                r.text("logSeverityScreen"),
                r.text("defaultEndpointToHostAction"),
                r.text("chainInsertMode"),
                r.text("iptablesBackend"),
                r.text("nftablesMode"),
                r.bool("bpfEnabled"),
                r.protoPorts("failsafeInboundHostPorts"),
                r.protoPorts("failsafeOutboundHostPorts"),
                r.optionalBool("ipipEnabled"),
                r.integer("ipipMTU"),
                r.optionalBool("vxlanEnabled"),
                r.integer("vxlanMTU"),
                r.integer("vxlanPort"),
                r.integer("vxlanVNI"),
                r.bool("wireguardEnabled"),
                r.integer("wireguardMTU"),
                r.integer("wireguardListeningPort"),
                r.duration("routeRefreshInterval"),
                r.duration("iptablesRefreshInterval"),
                r.text("iptablesLockFilePath"),
                r.duration("iptablesLockTimeout"),
                r.duration("iptablesLockProbeInterval"),
                r.duration("reportingInterval"),
                r.duration("reportingTTL"));
    }

    /** {@return Calico's defaults, typed}. */
    public static FelixSettings defaults() {
        return from(Map.of());
    }

    /** Reads one setting: the map's value when valid, else Calico's default. */
    private record Reader(Map<String, String> values) {

        String text(String field) {
            String v = values.get(field);
            if (v != null && !v.isEmpty()) {
                try {
                    return ConfigFields.normalize(field, v);
                } catch (IllegalArgumentException e) {
                    // fall through to the default
                }
            }
            return FelixDefaults.VALUES.getOrDefault(field, "");
        }

        boolean bool(String field) {
            return Boolean.parseBoolean(text(field));
        }

        Optional<Boolean> optionalBool(String field) {
            String v = text(field);
            return v.isEmpty() ? Optional.empty() : Optional.of(Boolean.parseBoolean(v));
        }

        int integer(String field) {
            return Integer.parseInt(text(field));
        }

        List<ProtoPort> protoPorts(String field) {
            return ConfigFields.parseProtoPorts(text(field));
        }

        Duration duration(String field) {
            return GoDurations.parse(text(field));
        }
    }

    /** Go duration text ("1h2m3.5s", "50ms") to a {@link Duration}; the text was validated already. */
    public static final class GoDurations {

        private GoDurations() {
        }

        public static Duration parse(String text) {
            String t = text.trim();
            boolean negative = t.startsWith("-");
            if (negative || t.startsWith("+")) {
                t = t.substring(1);
            }
            if (t.equals("0")) {
                return Duration.ZERO;
            }
            java.math.BigDecimal nanos = java.math.BigDecimal.ZERO;
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)").matcher(t);
            while (m.find()) {
                long unit = switch (m.group(2)) {
                    case "ns" -> 1L;
                    case "us", "µs", "μs" -> 1_000L;
                    case "ms" -> 1_000_000L;
                    case "s" -> 1_000_000_000L;
                    case "m" -> 60_000_000_000L;
                    default -> 3_600_000_000_000L;
                };
                nanos = nanos.add(new java.math.BigDecimal(m.group(1)).multiply(java.math.BigDecimal.valueOf(unit)));
            }
            Duration d = Duration.ofNanos(nanos.longValue());
            return negative ? d.negated() : d;
        }
    }
}
