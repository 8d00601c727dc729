package calico.typha.server;

import calico.proto.tls.PemKey;
import calico.libcalico.typha.PeerIdentity;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.TlsServerCredentials;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * Typha's side of mutual TLS: the handshake requires a client certificate signed by the CA
 * (TYPHA_CAFILE); then every stream is refused with PERMISSION_DENIED unless that certificate
 * carries TYPHA_CLIENTCN or TYPHA_CLIENTURISAN.
 */
public final class TyphaTls {

    private TyphaTls() {
    }

    public static ServerCredentials serverCredentials(String caFile, String certFile, String keyFile) {
        try {
            return TlsServerCredentials.newBuilder()
                    // PKCS#1 keys too (Helm's, Go's), as Calico's typha reads them
                    .keyManager(java.nio.file.Files.newInputStream(java.nio.file.Path.of(certFile)),
                            PemKey.pkcs8(java.nio.file.Path.of(keyFile)))
                    .trustManager(new File(caFile))
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("TYPHA_CAFILE / TYPHA_SERVERCERTFILE / TYPHA_SERVERKEYFILE: cannot read "
                    + caFile + ", " + certFile + ", " + keyFile, e);
        }
    }

    /** {@return the interceptor enforcing the client CN / URI SAN rule} */
    public static ServerInterceptor clientIdentityCheck(String clientCn, String clientUriSan) {
        PeerIdentity expected = new PeerIdentity(clientCn, clientUriSan);
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                String why = check(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION), expected);
                if (why != null) {
                    call.close(Status.PERMISSION_DENIED.withDescription("client " + why
                            + " (TYPHA_CLIENTCN / TYPHA_CLIENTURISAN)"), new Metadata());
                    return new ServerCall.Listener<>() {
                    };
                }
                return next.startCall(call, headers);
            }
        };
    }

    private static String check(SSLSession session, PeerIdentity expected) {
        if (session == null) {
            return "connection is not TLS";
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof X509Certificate leaf)) {
                return "presented no X.509 certificate";
            }
            return expected.mismatch(leaf);
        } catch (SSLPeerUnverifiedException e) {
            return "presented no certificate";
        }
    }
}
