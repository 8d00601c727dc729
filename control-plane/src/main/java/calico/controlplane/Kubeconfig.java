package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;

/**
 * A kubeconfig for one user of one cluster, with the CA and the client pair embedded, so the
 * file works wherever it is copied. Written with mode 0600: it holds a private key.
 */
public record Kubeconfig(URI server, Path caCert, Pki.Pair client, String user) {

    static final String CLUSTER = "calico-local";

    public String render() {
        return """
                apiVersion: v1
                kind: Config
                clusters:
                - name: %1$s
                  cluster:
                    server: %2$s
                    certificate-authority-data: %3$s
                users:
                - name: %4$s
                  user:
                    client-certificate-data: %5$s
                    client-key-data: %6$s
                contexts:
                - name: %4$s@%1$s
                  context:
                    cluster: %1$s
                    user: %4$s
                current-context: %4$s@%1$s
                """.formatted(CLUSTER, server, base64(caCert), user, base64(client.cert()), base64(client.key()));
    }

    /** Writes the kubeconfig to {@code file} (mode 0600) and {@return the file}. */
    public Path write(Path file) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, render(), StandardCharsets.UTF_8);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write kubeconfig " + file, e);
        }
    }

    private static String base64(Path file) {
        try {
            return Base64.getEncoder().encodeToString(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
