package calico.libcalico.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away PKI made with the {@code openssl} command: a CA, a server certificate for
 * {@code 127.0.0.1} and a client certificate, keys in PEM PKCS#8. Valid for one day.
 */
public record TestCertificates(Path caCert, Path caKey, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {

    /** Generates the files in {@code dir}. */
    public static TestCertificates generate(Path dir) {
        try {
            Files.createDirectories(dir);
            Path ca = dir.resolve("ca.crt");
            Path caKey = dir.resolve("ca.key");
            openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", caKey.toString(), "-out", ca.toString(),
                    "-days", "1", "-subj", "/CN=calico-test-ca");
            Path serverExt = dir.resolve("server.ext");
            Files.writeString(serverExt, "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
                    StandardCharsets.UTF_8);
            Path clientExt = dir.resolve("client.ext");
            Files.writeString(clientExt, "extendedKeyUsage=clientAuth\n", StandardCharsets.UTF_8);
            Path[] server = leaf(dir, "server", ca, caKey, serverExt);
            Path[] client = leaf(dir, "client", ca, caKey, clientExt);
            return new TestCertificates(ca, caKey, server[0], server[1], client[0], client[1]);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write certificates to " + dir, e);
        }
    }

    /** {@return [certificate, key]} of another client certificate of this CA, for {@code commonName}, beside the others. */
    public Path[] client(String commonName) {
        Path dir = caCert.getParent();
        return leaf(dir, commonName, caCert, caKey, dir.resolve("client.ext"));
    }

    /**
     * {@return [certificate, key]} of another server certificate of this CA, for {@code commonName}
     * with {@code subjectAltName} in openssl's form ({@code DNS:goldmane.example,IP:10.0.0.1}),
     * beside the others: for tests of the server-name check.
     */
    public Path[] server(String commonName, String subjectAltName) {
        Path dir = caCert.getParent();
        Path ext = dir.resolve(commonName + ".ext");
        try {
            Files.writeString(ext, "subjectAltName=" + subjectAltName + "\nextendedKeyUsage=serverAuth\n",
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + ext, e);
        }
        return leaf(dir, commonName, caCert, caKey, ext);
    }

    private static Path[] leaf(Path dir, String name, Path ca, Path caKey, Path ext) {
        Path key = dir.resolve(name + ".key");
        Path csr = dir.resolve(name + ".csr");
        Path crt = dir.resolve(name + ".crt");
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key.toString(), "-out", csr.toString(),
                "-subj", "/CN=" + name);
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
                "-CAcreateserial", "-out", crt.toString(), "-days", "1", "-extfile", ext.toString());
        return new Path[] {crt, key};
    }

    private static void openssl(Path dir, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed:\n" + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run openssl (Debian package openssl) for test certificates", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
