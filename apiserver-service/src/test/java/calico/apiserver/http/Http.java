package calico.apiserver.http;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/** A test HTTPS client that trusts the server's self-signed certificate and sends a bearer token. */
public final class Http {

    private final HttpClient client;
    private final String base;
    private final String token;

    public Http(String base, String token) {
        this(base, token, null);
    }

    public Http(String base, String token, SSLContext ssl) {
        this.base = base;
        this.token = token;
        try {
            SSLContext ctx = ssl;
            if (ctx == null) {
                ctx = SSLContext.getInstance("TLS");
                ctx.init(null, new TrustManager[] {trustAll()}, new SecureRandom());
            }
            SSLParameters params = new SSLParameters();
            params.setEndpointIdentificationAlgorithm("");
            // HTTP/1.1: the JDK 17 client's HTTP/2 gets GOAWAY from Go servers (kube-apiserver).
            this.client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(ctx)
                    .sslParameters(params).build();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@return a TLS context} that presents {@code cert}/{@code key} (PEM, PKCS#8 RSA; none when
     * null) and trusts the server when {@code trustedCa} (PEM) signed it, or any server when null.
     */
    public static SSLContext tls(Path trustedCa, Path cert, Path key) {
        try {
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            TrustManager[] trust = {trustAll()};
            if (trustedCa != null) {
                KeyStore store = KeyStore.getInstance("PKCS12");
                store.load(null, null);
                try (var in = Files.newInputStream(trustedCa)) {
                    store.setCertificateEntry("ca", cf.generateCertificate(in));
                }
                TrustManagerFactory tmf = TrustManagerFactory.getInstance(
                        TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(store);
                trust = tmf.getTrustManagers();
            }
            KeyManager[] keys = null;
            if (cert != null) {
                String pem = Files.readString(key).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
                PrivateKey pk = KeyFactory.getInstance("RSA").generatePrivate(
                        new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                try (var in = Files.newInputStream(cert)) {
                    ks.setKeyEntry("me", pk, new char[0], new Certificate[] {cf.generateCertificate(in)});
                }
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(
                        KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(ks, new char[0]);
                keys = kmf.getKeyManagers();
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(keys, trust, new SecureRandom());
            return ctx;
        } catch (Exception e) {
            throw new IllegalStateException("cannot build a TLS context from " + trustedCa + ", " + cert, e);
        }
    }

    public static X509TrustManager trustAll() {
        return new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
    }

    public HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    public HttpResponse<String> send(HttpRequest.Builder b) {
        try {
            return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public HttpResponse<java.io.InputStream> stream(HttpRequest.Builder b) {
        try {
            return client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@return the next watch event line}, skipping the keep-alive newlines the server sends on a quiet stream. */
    public static String nextEvent(java.io.BufferedReader in) throws java.io.IOException {
        String line;
        do {
            line = in.readLine();
        } while (line != null && line.isBlank());
        return line;
    }

    public HttpResponse<String> get(String path) {
        return send(request(path).GET());
    }

    public HttpResponse<String> post(String path, String contentType, String body) {
        return send(request(path).header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    public HttpResponse<String> put(String path, String body) {
        return send(request(path).header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
    }

    public HttpResponse<String> patch(String path, String contentType, String body) {
        return send(request(path).header("Content-Type", contentType)
                .method("PATCH", HttpRequest.BodyPublishers.ofString(body)));
    }

    public HttpResponse<String> delete(String path) {
        return send(request(path).DELETE());
    }
}
