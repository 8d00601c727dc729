package calico.confd.render;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Secrets as Kubernetes mounts them: {@code <dir>/<secret name>/<key>} holds the value (one
 * secret volume per directory). A trailing newline is not part of the password. Read on every
 * render, so a rotated secret applies at the next pass.
 */
public final class DirectorySecrets implements SecretSource {

    private final Path dir;

    public DirectorySecrets(Path dir) {
        this.dir = dir;
    }

    @Override
    public Optional<String> get(String secretName, String key) {
        if (secretName.contains("/") || key.contains("/") || secretName.startsWith(".") || key.startsWith(".")) {
            return Optional.empty();
        }
        Path f = dir.resolve(secretName).resolve(key);
        if (!Files.isRegularFile(f)) {
            return Optional.empty();
        }
        try {
            String v = Files.readString(f, StandardCharsets.UTF_8);
            return Optional.of(v.endsWith("\n") ? v.substring(0, v.length() - 1) : v);
        } catch (IOException e) {
            throw new UncheckedIOException("reading secret " + f + ": " + e.getMessage(), e);
        }
    }
}
