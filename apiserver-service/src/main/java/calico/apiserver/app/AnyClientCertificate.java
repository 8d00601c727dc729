package calico.apiserver.app;

import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS layer's trust for client certificates: it takes any (the handshake still proves the
 * client holds the certificate's key), and the {@code Authenticator} decides whether a CA of the
 * moment vouches for it. This is how k8s.io/apiserver serves ({@code tls.RequestClientCert} plus
 * verification in its x509 authenticators), and what lets the CAs come from a ConfigMap that
 * changes while Tomcat runs. No accepted issuers are announced, so clients always send their
 * certificate. Tomcat instantiates it by name ({@code SSLHostConfig.trustManagerClassName}).
 */
public final class AnyClientCertificate implements X509TrustManager {

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {
        // Verified per request by the Authenticator.
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
        throw new CertificateException("the API server's trust manager checks clients only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
    }
}
