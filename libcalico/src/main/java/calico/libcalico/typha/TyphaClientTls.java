package calico.libcalico.typha;

import calico.libcalico.tls.CaTrust;
import calico.proto.tls.PemKey;
import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.function.Function;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Felix's side of typha's mutual TLS: present our certificate, trust typha's only when the CA
 * signed it and it carries FELIX_TYPHACN or FELIX_TYPHAURISAN. As in Calico, the host name is
 * not what is checked; the CN / URI SAN is.
 */
public final class TyphaClientTls {

    private TyphaClientTls() {
    }

    /** {@return a channel factory for {@link TyphaClientOptions#withChannels}} */
    public static Function<String, ManagedChannel> channels(Path caFile, Path certFile, Path keyFile,
                                                            PeerIdentity expectedServer) {
        ChannelCredentials creds;
        try {
            creds = TlsChannelCredentials.newBuilder()
                    .keyManager(java.nio.file.Files.newInputStream(certFile), PemKey.pkcs8(keyFile))
                    .trustManager(new IdentityTrustManager(CaTrust.load(caFile), expectedServer))
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("typha client TLS: cannot read " + certFile + " / " + keyFile, e);
        }
        return address -> NettyChannelBuilder.forTarget(address, creds).build();
    }

    /** Chain validation by the CA, then the CN / URI SAN rule instead of host name verification. */
    private static final class IdentityTrustManager extends X509ExtendedTrustManager {
        private final X509TrustManager ca;
        private final PeerIdentity expected;

        IdentityTrustManager(X509TrustManager ca, PeerIdentity expected) {
            this.ca = ca;
            this.expected = expected;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            ca.checkServerTrusted(chain, authType);
            String why = expected.mismatch(chain[0]);
            if (why != null) {
                throw new CertificateException("typha's " + why + " (FELIX_TYPHACN / FELIX_TYPHAURISAN)");
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("client-side trust manager");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return ca.getAcceptedIssuers();
        }
    }
}
