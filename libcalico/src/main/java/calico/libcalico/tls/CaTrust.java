package calico.libcalico.tls;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** The trust of a PEM CA bundle, for the clients that check a server against a CA file. */
public final class CaTrust {

    private CaTrust() {
    }

    /**
     * {@return a trust manager for the certificates in {@code caFile}}; an unreadable file is an
     * {@link UncheckedIOException}, one without certificates or not PEM an {@link IllegalArgumentException},
     * each naming the file.
     */
    public static X509TrustManager load(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca-" + i++, cert);
            }
            if (i == 0) {
                throw new IllegalArgumentException("CA file " + caFile + ": no certificate in it");
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            for (var tm : tmf.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    return x;
                }
            }
            throw new IllegalStateException("no X509 trust manager");
        } catch (IOException e) {
            throw new UncheckedIOException("CA file " + caFile + ": cannot read", e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("CA file " + caFile + ": " + e.getMessage(), e);
        }
    }
}
