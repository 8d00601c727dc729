package calico.confd.app;

import calico.libcalico.typha.PeerIdentity;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClientOptions;
import calico.libcalico.typha.TyphaClientTls;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.convert.DurationUnit;

/**
 * How confd reaches typha, bound from {@code confd.typha.*}. Calico's confd reads each setting
 * as {@code <prefix>TYPHA<FIELD>} with the prefixes {@code CONFD_}, {@code FELIX_} and
 * {@code CALICO_}, a later prefix winning ({@code CALICO_TYPHAADDR} over {@code FELIX_TYPHAADDR}
 * over {@code CONFD_TYPHAADDR}), and {@code none} counts as unset; {@code application.yml}
 * maps them so. With no address confd watches the datastore itself.
 *
 * @param addr           {@code host:port}[,{@code host:port}…] of typha replicas (…TYPHAADDR)
 * @param k8sServiceName discovering typha from a Kubernetes service (…TYPHAK8SSERVICENAME): not
 *                       supported here; without an address it is refused at startup
 * @param readTimeout    reconnect when typha sent nothing for this long (…TYPHAREADTIMEOUT, seconds)
 * @param caFile         with the two below, mutual TLS (…TYPHACAFILE)
 * @param certFile       confd's certificate (…TYPHACERTFILE)
 * @param keyFile        its key (…TYPHAKEYFILE)
 * @param cn             typha's certificate must carry this CN… (…TYPHACN)
 * @param uriSan         …or this URI SAN (…TYPHAURISAN)
 */
@ConfigurationProperties(prefix = "confd.typha")
public record ConfdTyphaProperties(
        String addr,
        String k8sServiceName,
        @DefaultValue("30") @DurationUnit(ChronoUnit.SECONDS) Duration readTimeout,
        String caFile,
        String certFile,
        String keyFile,
        String cn,
        String uriSan) {

    private static final String VARS = " (CALICO_, FELIX_ or CONFD_ prefix)";

    public ConfdTyphaProperties {
        addr = unset(addr);
        k8sServiceName = unset(k8sServiceName);
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

    /** Settings with no typha (confd watches the datastore itself). */
    public static ConfdTyphaProperties none() {
        return new ConfdTyphaProperties(null, null, Duration.ofSeconds(30), null, null, null, null, null);
    }

    /** Calico's rule: empty and {@code none} are unset. */
    private static String unset(String s) {
        return s == null || s.isBlank() || s.trim().equals("none") ? null : s.trim();
    }

    private static List<String> addresses(String raw) {
        List<String> out = Arrays.stream(raw.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
        for (String a : out) {
            int colon = a.lastIndexOf(':');
            if (colon <= 0 || colon == a.length() - 1) {
                throw new IllegalArgumentException("confd.typha.addr (TYPHAADDR" + VARS + "): \"" + a
                        + "\" is not host:port");
            }
        }
        return out;
    }

    /** {@return whether confd reads through typha} */
    public boolean enabled() {
        return addr != null;
    }

    /**
     * {@return why these settings cannot be used}, or {@code null}: a service name without an
     * address asks for discovery, which this confd does not do (it would silently fall back to
     * the datastore otherwise).
     */
    public String unsupported() {
        if (addr == null && k8sServiceName != null) {
            return "confd.typha.k8s-service-name (TYPHAK8SSERVICENAME" + VARS + ") is \"" + k8sServiceName
                    + "\": discovering typha from a Kubernetes service is not supported by this confd; set "
                    + "CALICO_TYPHAADDR (host:port) instead";
        }
        return null;
    }

    /** {@return the client options for this node}: typha's {@code bgp} syncer */
    public TyphaClientOptions options(String nodeName) {
        TyphaClientOptions o = TyphaClientOptions.plaintext(addresses(addr), nodeName, SyncerType.BGP)
                .withReadTimeout(readTimeout).withCompression(true);
        if (caFile != null) {
            o = o.withChannels(TyphaClientTls.channels(Path.of(caFile), Path.of(certFile), Path.of(keyFile),
                    new PeerIdentity(cn, uriSan)));
        }
        return o;
    }
}
