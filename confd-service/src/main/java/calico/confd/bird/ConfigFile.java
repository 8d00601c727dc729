package calico.confd.bird;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * BIRD's configuration file, replaced only by a validated candidate. A candidate is written
 * next to the target (same filesystem, so the rename is atomic), checked with
 * {@link BirdValidator}, and renamed over the target only when BIRD accepts it: the file BIRD
 * reads is always the last good configuration, never a half-written or rejected one.
 */
public final class ConfigFile {

    private final Path target;
    private final BirdValidator validator;

    public ConfigFile(Path target, BirdValidator validator) {
        this.target = target;
        this.validator = validator;
    }

    public Path path() {
        return target;
    }

    /** Result of {@link #install}. */
    public sealed interface Outcome permits Installed, Unchanged, Rejected {
    }

    /** The file now holds the new text. */
    public record Installed() implements Outcome {
    }

    /** The file already held exactly this text: nothing to do. */
    public record Unchanged() implements Outcome {
    }

    /** BIRD refused the text; the file is untouched. */
    public record Rejected(String reason) implements Outcome {
    }

    public Outcome install(String text) {
        try {
            if (Files.exists(target) && Files.readString(target, StandardCharsets.UTF_8).equals(text)) {
                return new Unchanged();
            }
            Path dir = target.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path candidate = Files.createTempFile(dir, target.getFileName() + ".", ".candidate");
            try {
                Files.writeString(candidate, text, StandardCharsets.UTF_8);
                String problem = validator.check(candidate);
                if (problem != null) {
                    return new Rejected(problem.replace(candidate.toString(), "<candidate>"));
                }
                try {
                    Files.move(candidate, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(candidate, target, StandardCopyOption.REPLACE_EXISTING);
                }
                return new Installed();
            } finally {
                Files.deleteIfExists(candidate);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + target + ": " + e.getMessage(), e);
        }
    }
}
