package calico.felix.flows;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How felix proves itself to goldmane and checks goldmane's certificate: mutual TLS with felix's
 * client certificate and key, and goldmane's certificate signed by {@code caFile} and naming the
 * host of {@code flowLogsGoldmaneServer} (the ordinary server-name check). Calico's felix uses
 * its typha client settings for this ({@code typhaCAFile}, {@code typhaCertFile},
 * {@code typhaKeyFile}): they authenticate felix as a client, to typha and goldmane alike.
 * Without one felix talks to goldmane in plain text, as Calico's felix does with no files set.
 *
 * @param caFile   the CA goldmane's certificate must chain to
 * @param certFile felix's certificate
 * @param keyFile  its key (PEM)
 */
public record ClientCertificate(Path caFile, Path certFile, Path keyFile) {

    public ClientCertificate {
        Objects.requireNonNull(caFile, "caFile");
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
    }
}
