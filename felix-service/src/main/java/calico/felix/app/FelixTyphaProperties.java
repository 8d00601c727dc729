package calico.felix.app;

import calico.felix.flows.ClientCertificate;
import calico.libcalico.typha.PeerIdentity;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClientOptions;
import calico.libcalico.typha.TyphaClientTls;
import java.nio.file.Path;
import calico.libcalico.config.Variables;
import java.time.Duration;
import java.util.List;

/**
 * How felix reaches typha, read from Calico's names ({@link #fromVariables}; FELIX_TYPHAADDR → felix.typha-addr).
 * With no address felix watches the datastore itself.
 *
 * @param typhaAddr        {@code host:port}[,{@code host:port}…] of typha replicas (FELIX_TYPHAADDR)
 * @param typhaReadTimeout reconnect when typha sent nothing for this long (FELIX_TYPHAREADTIMEOUT, seconds)
 * @param typhaCaFile      with the two below, mutual TLS (FELIX_TYPHACAFILE)
 * @param typhaCertFile    felix's certificate (FELIX_TYPHACERTFILE)
 * @param typhaKeyFile     its key (FELIX_TYPHAKEYFILE)
 * @param typhaCn          typha's certificate must carry this CN… (FELIX_TYPHACN)
 * @param typhaUriSan      …or this URI SAN (FELIX_TYPHAURISAN)
 * @param typhaK8sServiceName without an address, discover typha from this Kubernetes service's
 *                         endpoints (FELIX_TYPHAK8SSERVICENAME; {@link TyphaDiscovery})
 * @param typhaK8sNamespace its namespace (FELIX_TYPHAK8SNAMESPACE, kube-system)
 */
public record FelixTyphaProperties(
        String typhaAddr,
        Duration typhaReadTimeout,
        String typhaCaFile,
        String typhaCertFile,
        String typhaKeyFile,
        String typhaCn,
        String typhaUriSan,
        String typhaK8sServiceName,
        String typhaK8sNamespace) {

    /**
     * {@return the settings in {@code v}}
     *
     * @throws IllegalArgumentException naming the setting, its variable and the reason
     */
    static FelixTyphaProperties fromVariables(Variables v) {
        return new FelixTyphaProperties(v.first("FELIX_TYPHAADDR"),
                v.seconds("felix.typha-read-timeout (FELIX_TYPHAREADTIMEOUT)", Duration.ofSeconds(30), "FELIX_TYPHAREADTIMEOUT"),
                v.first("FELIX_TYPHACAFILE"), v.first("FELIX_TYPHACERTFILE"), v.first("FELIX_TYPHAKEYFILE"),
                v.first("FELIX_TYPHACN"), v.first("FELIX_TYPHAURISAN"), v.first("FELIX_TYPHAK8SSERVICENAME"),
                v.or("kube-system", "FELIX_TYPHAK8SNAMESPACE"));
    }

    public FelixTyphaProperties {
        int tls = (blank(typhaCaFile) ? 0 : 1) + (blank(typhaCertFile) ? 0 : 1) + (blank(typhaKeyFile) ? 0 : 1);
        if (tls != 0 && tls != 3) {
            throw new IllegalArgumentException("felix.typha-ca-file, felix.typha-cert-file, felix.typha-key-file "
                    + "(FELIX_TYPHACAFILE, FELIX_TYPHACERTFILE, FELIX_TYPHAKEYFILE): set all three for TLS, or none");
        }
        if (tls == 3 && blank(typhaCn) && blank(typhaUriSan)) {
            throw new IllegalArgumentException("felix.typha-cn / felix.typha-uri-san (FELIX_TYPHACN, FELIX_TYPHAURISAN): "
                    + "with TLS at least one is required");
        }
        if (!blank(typhaAddr)) {
            addresses(typhaAddr);
        }
        typhaK8sNamespace = blank(typhaK8sNamespace) ? "kube-system" : typhaK8sNamespace.trim();
    }

    /** Settings with no typha (felix watches the datastore itself). */
    static FelixTyphaProperties none() {
        return new FelixTyphaProperties(null, Duration.ofSeconds(30), null, null, null, null, null, null, null);
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static List<String> addresses(String raw) {
        return TyphaClientOptions.parseAddresses("felix.typha-addr (FELIX_TYPHAADDR)", raw);
    }

    /** {@return whether felix reads through typha: an address, or a service to discover it from} */
    public boolean enabled() {
        return !blank(typhaAddr) || discovered();
    }

    /** {@return whether the addresses come from Kubernetes (a service name and no explicit address)} */
    public boolean discovered() {
        return blank(typhaAddr) && !blank(typhaK8sServiceName);
    }

    /**
     * {@return felix's client certificate for goldmane, or null without TLS}: as in Calico, the typha
     * client files authenticate felix to goldmane too (flow logs, {@code flowLogsGoldmaneServer});
     * goldmane's certificate is checked against the CA and the server's host name, not typhaCN.
     */
    public ClientCertificate clientCertificate() {
        return blank(typhaCaFile) ? null
                : new ClientCertificate(Path.of(typhaCaFile), Path.of(typhaCertFile), Path.of(typhaKeyFile));
    }

    /** {@return the client options for this node, to FELIX_TYPHAADDR} */
    TyphaClientOptions options(String hostname) {
        return options(hostname, addresses(typhaAddr));
    }

    /** {@return the client options for this node, to the given typhas (tried in this order)} */
    TyphaClientOptions options(String hostname, List<String> addresses) {
        TyphaClientOptions o = TyphaClientOptions.plaintext(addresses, hostname, SyncerType.FELIX)
                .withReadTimeout(typhaReadTimeout).withCompression(true);
        ClientCertificate tls = clientCertificate();
        if (tls != null) {
            o = o.withChannels(TyphaClientTls.channels(tls.caFile(), tls.certFile(), tls.keyFile(),
                    new PeerIdentity(typhaCn, typhaUriSan)));
        }
        return o;
    }
}
