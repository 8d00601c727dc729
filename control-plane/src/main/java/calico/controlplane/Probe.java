package calico.controlplane;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Health checks of the parts over HTTP(S): anonymous GETs that the parts allow without
 * credentials ({@code /readyz}, {@code /healthz}, etcd's {@code /health}), trusting only the
 * cluster CA.
 */
final class Probe {

    private static final Duration POLL = Duration.ofMillis(50);

    private final HttpClient http;

    Probe(Path caCert) {
        // HTTP/1.1: the JDK 17 client's HTTP/2 gets a GOAWAY from Go's servers at once.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(trusting(caCert)).connectTimeout(Duration.ofSeconds(2)).build();
    }

    /** {@return whether GET {@code url} answers 200} within two seconds. */
    boolean ok(URI url) {
        try {
            HttpResponse<Void> r = http.send(HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(2)).GET().build(),
                    HttpResponse.BodyHandlers.discarding());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Waits until the part's health URL answers 200, failing early (with the end of the part's
     * log) if the part exits, and after {@code timeout}.
     */
    void await(Part part, Duration timeout) {
        URI url = part.health();
        Instant deadline = Instant.now().plus(timeout);
        while (!ok(url)) {
            if (!part.alive()) {
                String message = part.name() + " exited while starting; the end of " + part.log() + ":\n" + part.logTail(30);
                throw part.lastStartSaysPortTaken() ? new PortTakenException(part.name(), message)
                        : new IllegalStateException(message);
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException(part.name() + " did not answer " + url + " within " + timeout.toSeconds()
                        + " s; the end of " + part.log() + ":\n" + part.logTail(30));
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + part.name(), e);
            }
        }
    }

    private static SSLContext trusting(Path caCert) {
        try (InputStream in = Files.newInputStream(caCert)) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the cluster CA " + caCert + ": " + e.getMessage(), e);
        }
    }

    /** A part exited because its port was bound by the time it tried: on free ports, worth a start on others. */
    static final class PortTakenException extends IllegalStateException {
        private final String part;

        PortTakenException(String part, String message) {
            super(message);
            this.part = part;
        }

        String part() {
            return part;
        }
    }
}
