package calico.goldmane.server;

import calico.proto.tls.PemKey;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The gRPC port's TLS from files: the server certificate and key (SERVER_CERT_PATH,
 * SERVER_KEY_PATH) and, for mutual TLS, the CA that signs felix's and whisker-backend's client
 * certificates (CA_CERT_PATH): with it, a client without a certificate from that CA fails the
 * handshake.
 */
public final class GoldmaneTls {

    private GoldmaneTls() {
    }

    public static ServerCredentials serverCredentials(String certFile, String keyFile, String caFile) {
        try {
            // PemKey: a PKCS#1 key (Helm's, Go's tools') is read as well as a PKCS#8 one.
            var b = TlsServerCredentials.newBuilder().keyManager(Files.newInputStream(Path.of(certFile)),
                    PemKey.pkcs8(Path.of(keyFile)));
            if (caFile != null && !caFile.isBlank()) {
                b.trustManager(new File(caFile)).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (IOException e) {
            throw new UncheckedIOException("SERVER_CERT_PATH / SERVER_KEY_PATH / CA_CERT_PATH: cannot read "
                    + certFile + ", " + keyFile + ", " + caFile, e);
        }
    }
}
