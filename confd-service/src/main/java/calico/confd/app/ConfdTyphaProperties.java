package calico.confd.app;

import calico.libcalico.config.Variables;
import calico.libcalico.typha.PeerIdentity;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClientOptions;
import calico.libcalico.typha.TyphaClientTls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * How confd reaches typha ({@link #fromVariables}). Calico's confd reads each setting
 * as {@code <prefix>TYPHA<FIELD>} with the prefixes {@code CONFD_}, {@code FELIX_} and
 * {@code CALICO_}, a later prefix winning ({@code CALICO_TYPHAADDR} over {@code FELIX_TYPHAADDR}
 * over {@code CONFD_TYPHAADDR}), and {@code none} counts as unset. With no address confd watches the
 * datastore itself.
 *
 * @param addr           {@code host:port}[,{@code host:port}…] of typha replicas (…TYPHAADDR)
 * @param k8sServiceName without an address, typha's replicas come from this Kubernetes service's
 *                       EndpointSlices (…TYPHAK8SSERVICENAME), as felix finds them
 * @param k8sNamespace   that service's namespace (…TYPHAK8SNAMESPACE, default {@code kube-system})
 * @param readTimeout    reconnect when typha sent nothing for this long (…TYPHAREADTIMEOUT, seconds)
 * @param caFile         with the two below, mutual TLS (…TYPHACAFILE)
 * @param certFile       confd's certificate (…TYPHACERTFILE)
 * @param keyFile        its key (…TYPHAKEYFILE)
 * @param cn             typha's certificate must carry this CN… (…TYPHACN)
 * @param uriSan         …or this URI SAN (…TYPHAURISAN)
 */
public record ConfdTyphaProperties(
        String addr,
        String k8sServiceName,
        String k8sNamespace,
        Duration readTimeout,
        String caFile,
        String certFile,
        String keyFile,
        String cn,
        String uriSan) {

    private static final String VARS = " (CALICO_, FELIX_ or CONFD_ prefix)";

    public ConfdTyphaProperties {
        addr = unset(addr);
        k8sServiceName = unset(k8sServiceName);
        k8sNamespace = unset(k8sNamespace) == null ? "kube-system" : k8sNamespace.trim();
        caFile = unset(caFile);
        certFile = unset(certFile);
        keyFile = unset(keyFile);
        cn = unset(cn);
        uriSan = unset(uriSan);
        if (readTimeout == null || readTimeout.isNegative() || readTimeout.isZero()) {
            throw new IllegalArgumentException("confd.typha.read-timeout (TYPHAREADTIMEOUT" + VARS
                    + "): must be positive, got " + readTimeout);
        }
        int tls = (caFile == null ? 0 : 1) + (certFile == null ? 0 : 1) + (keyFile == null ? 0 : 1);
        if (tls != 0 && tls != 3) {
            throw new IllegalArgumentException("confd.typha.ca-file, confd.typha.cert-file, confd.typha.key-file "
                    + "(TYPHACAFILE, TYPHACERTFILE, TYPHAKEYFILE" + VARS + "): set all three for TLS, or none");
        }
        if (tls == 3 && cn == null && uriSan == null) {
            throw new IllegalArgumentException("confd.typha.cn / confd.typha.uri-san (TYPHACN, TYPHAURISAN" + VARS
                    + "): with TLS at least one is required");
        }
        if (addr != null) {
            addresses(addr);
        }
    }

    /**
     * {@return the settings in {@code variables}}: each {@code <prefix>TYPHA<FIELD>}, {@code CALICO_} over
     * {@code FELIX_} over {@code CONFD_}
     *
     * @throws IllegalArgumentException naming the setting, its variables and the reason
     */
    public static ConfdTyphaProperties fromVariables(Map<String, String> variables) {
        Variables v = new Variables(variables);
        java.util.function.Function<String, String> typha = field -> v.first("CALICO_TYPHA" + field,
                "FELIX_TYPHA" + field, "CONFD_TYPHA" + field);
        return new ConfdTyphaProperties(typha.apply("ADDR"), typha.apply("K8SSERVICENAME"),
                typha.apply("K8SNAMESPACE"), v.seconds("confd.typha.read-timeout (TYPHAREADTIMEOUT" + VARS + ")",
                Duration.ofSeconds(30), "CALICO_TYPHAREADTIMEOUT", "FELIX_TYPHAREADTIMEOUT", "CONFD_TYPHAREADTIMEOUT"),
                typha.apply("CAFILE"), typha.apply("CERTFILE"), typha.apply("KEYFILE"), typha.apply("CN"),
                typha.apply("URISAN"));
    }

    /** Calico's rule: empty and {@code none} are unset. */
    private static String unset(String s) {
        return s == null || s.isBlank() || s.trim().equals("none") ? null : s.trim();
    }

    private static List<String> addresses(String raw) {
        return TyphaClientOptions.parseAddresses("confd.typha.addr (TYPHAADDR" + VARS + ")", raw);
    }

    /** {@return whether confd reads through typha}: an address, or a service to discover it from */
    public boolean enabled() {
        return addr != null || k8sServiceName != null;
    }

    /** {@return whether typha's replicas come from its Kubernetes service} (an address wins, as in Calico) */
    public boolean discovered() {
        return addr == null && k8sServiceName != null;
    }

    /** {@return the configured replicas} (empty when they are discovered) */
    public List<String> addresses() {
        return addr == null ? List.of() : addresses(addr);
    }

    /** {@return the client options for this node and these replicas}: typha's {@code bgp} syncer */
    public TyphaClientOptions options(String nodeName, List<String> replicas) {
        TyphaClientOptions o = TyphaClientOptions.plaintext(replicas, nodeName, SyncerType.BGP)
                .withReadTimeout(readTimeout).withCompression(true);
        if (caFile != null) {
            o = o.withChannels(TyphaClientTls.channels(Path.of(caFile), Path.of(certFile), Path.of(keyFile),
                    new PeerIdentity(cn, uriSan)));
        }
        return o;
    }
}
