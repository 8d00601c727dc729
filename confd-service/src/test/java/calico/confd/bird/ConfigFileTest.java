package calico.confd.bird;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file BIRD reads changes only to a configuration {@code bird -p} accepts. */
class ConfigFileTest {

    @TempDir
    Path dir;

    private static final String GOOD = "router id 10.0.0.1;\nprotocol device {\n}\n";

    @Test
    void installsValidatedTextAndKeepsTheLastGoodOneOnRejection() throws Exception {
        ConfigFile f = new ConfigFile(dir.resolve("bird.cfg"), new BirdValidator("/usr/sbin/bird"));
        assertThat(f.install(GOOD)).isInstanceOf(ConfigFile.Installed.class);
        assertThat(f.install(GOOD)).isInstanceOf(ConfigFile.Unchanged.class);

        ConfigFile.Outcome bad = f.install("router id 10.0.0.1;\nprotocol bgp {\n  neighbor nonsense;\n}\n");
        assertThat(bad).isInstanceOf(ConfigFile.Rejected.class);
        assertThat(((ConfigFile.Rejected) bad).reason()).contains("<candidate>:3").doesNotContain(dir.toString());
        assertThat(Files.readString(dir.resolve("bird.cfg"))).isEqualTo(GOOD);
        // No candidate left behind.
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("bird.cfg");
        }
    }

    @Test
    void aMissingBirdBinaryIsARejectionNotACrash() {
        ConfigFile f = new ConfigFile(dir.resolve("bird.cfg"), new BirdValidator(dir.resolve("no-bird").toString()));
        ConfigFile.Outcome o = f.install(GOOD);
        assertThat(o).isInstanceOf(ConfigFile.Rejected.class);
        assertThat(((ConfigFile.Rejected) o).reason()).contains("cannot run");
        assertThat(Files.exists(dir.resolve("bird.cfg"))).isFalse();
    }
}
