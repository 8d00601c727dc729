package calico.apiserver.app;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The serving pair (given, or self-signed by {@code openssl} at start) and the client CAs. */
final class ServingCertificates {

    private ServingCertificates() {
    }

    /** {@return [certificate, key]} of a new self-signed pair for localhost, in {@code dir}. */
    static Path[] selfSigned(Path dir) {
        Path cert = dir.resolve("apiserver.crt");
        Path key = dir.resolve("apiserver.key");
        List<String> cmd = List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365",
                "-keyout", key.toString(), "-out", cert.toString(), "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl could not generate a self-signed certificate: "
                        + new String(out));
            }
        } catch (IOException e) {
            throw new IllegalStateException("no --tls-cert-file given and openssl is not available: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted generating a certificate", e);
        }
        return new Path[] {cert, key};
    }

    static List<X509Certificate> read(String file) {
        if (file == null || file.isBlank()) {
            return List.of();
        }
        try {
            CertificateFactory cf = CertificateFactory.getInstance("X.509");
            List<X509Certificate> out = new ArrayList<>();
            for (var c : cf.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(file))))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(file + ": no certificate in PEM file");
            }
            return out;
        } catch (IOException | CertificateException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }
}
