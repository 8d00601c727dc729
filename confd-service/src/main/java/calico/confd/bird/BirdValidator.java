package calico.confd.bird;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Checks a configuration file with {@code bird -p -c <file>} (parse only, nothing is started). */
public final class BirdValidator {

    private final String birdBinary;

    public BirdValidator(String birdBinary) {
        this.birdBinary = birdBinary;
    }

    /** {@return null when BIRD accepts the file, else BIRD's message (file, line and reason)} */
    public String check(Path file) {
        ProcessBuilder pb = new ProcessBuilder(List.of(birdBinary, "-p", "-c", file.toString()))
                .redirectErrorStream(true);
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return birdBinary + " -p did not finish in 60 s";
            }
            return p.exitValue() == 0 ? null : new String(out, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "cannot run " + birdBinary + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while validating";
        }
    }
}
