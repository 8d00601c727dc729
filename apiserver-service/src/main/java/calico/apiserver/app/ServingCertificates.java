package calico.apiserver.app;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The serving pair when none is given: self-signed by {@code openssl}, kept in {@code --cert-dir}. */
final class ServingCertificates {

    /**
     * The names the pair is valid for: loopback, and the Service the aggregation layer dials for
     * APIService {@code v3.projectcalico.org} ({@code calico-api} in {@code calico-apiserver}), which
     * it verifies as {@code <service>.<namespace>.svc}.
     */
    static final String SANS = "DNS:localhost,IP:127.0.0.1,IP:::1,DNS:calico-api,DNS:calico-api.calico-apiserver,"
            + "DNS:calico-api.calico-apiserver.svc,DNS:calico-api.calico-apiserver.svc.cluster.local";

    private ServingCertificates() {
    }

    /**
     * {@return [certificate, key]}: {@code dir/apiserver.crt} and {@code dir/apiserver.key}, as
     * k8s.io/apiserver names them under {@code --cert-dir}; kept if both exist (a restart keeps the
     * certificate an APIService's caBundle names), else made: self-signed, a CA of itself, so that
     * the certificate is also the caBundle.
     */
    static Path[] selfSigned(Path dir) {
        Path cert = dir.resolve("apiserver.crt");
        Path key = dir.resolve("apiserver.key");
        if (Files.isRegularFile(cert) && Files.isRegularFile(key)) {
            return new Path[] {cert, key};
        }
        List<String> cmd = List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365",
                "-keyout", key.toString(), "-out", cert.toString(), "-subj", "/CN=localhost",
                "-addext", "subjectAltName=" + SANS);
        try {
            Files.createDirectories(dir);
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl could not generate a self-signed certificate: "
                        + new String(out));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("no --tls-cert-file given and openssl could not make one in " + dir
                    + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted generating a certificate", e);
        }
        return new Path[] {cert, key};
    }
}
