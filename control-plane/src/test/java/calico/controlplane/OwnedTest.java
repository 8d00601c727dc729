package calico.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a killed JVM left under owned names is removed by the next owner; nothing else is touched. */
class OwnedTest {

    @Test
    void aNewDirectoryFirstRemovesOnlyTheLeftoversOfGoneOwnersUnderItsPrefix(@TempDir Path parent) throws Exception {
        long dead = deadPid();
        Path left = Files.createDirectories(parent.resolve("kube-test-p" + dead + "-0a1b2c3d").resolve("data/member"));
        Files.writeString(left.resolve("wal"), "x");
        Path leftWithSuffix = Files.createDirectory(parent.resolve("kube-test-p" + dead + "-0a1b2c3e-node-1"));
        Path live = Files.createDirectory(parent.resolve(Owned.name("kube-test")));
        Path longerPrefix = Files.createDirectory(parent.resolve("kube-test-pki-p" + dead + "-0a1b2c3d"));
        Path notOwned = Files.createDirectory(parent.resolve("kube-test-p" + dead + "-notahex1"));
        Path symlinkTarget = Files.createDirectory(parent.resolve("elsewhere"));
        Files.writeString(symlinkTarget.resolve("kept"), "y");
        Files.createSymbolicLink(parent.resolve("kube-test-p" + dead + "-0a1b2c3d").resolve("link"), symlinkTarget);

        Path made = Owned.directory(parent, "kube-test");

        assertThat(made).isDirectory().isEmptyDirectory();
        assertThat(made.getFileName().toString()).matches("kube-test-p" + ProcessHandle.current().pid() + "-[0-9a-f]{8}");
        assertThat(parent.resolve("kube-test-p" + dead + "-0a1b2c3d")).as("a gone owner's, with all it held").doesNotExist();
        assertThat(leftWithSuffix).as("a gone owner's, with a suffix").doesNotExist();
        assertThat(live).as("this JVM's own").isDirectory();
        assertThat(longerPrefix).as("another prefix's, swept by its own owner").isDirectory();
        assertThat(notOwned).as("not an owned name").isDirectory();
        assertThat(symlinkTarget.resolve("kept")).as("a link's target is not followed").exists();
    }

    @Test
    void theLongerPrefixSweepsItsOwn(@TempDir Path parent) throws Exception {
        long dead = deadPid();
        Path pki = Files.createDirectory(parent.resolve("kube-test-pki-p" + dead + "-0a1b2c3d"));
        Path other = Files.createDirectory(parent.resolve("kube-test-p" + dead + "-0a1b2c3d"));

        assertThat(Owned.leftovers(parent, "kube-test-pki")).containsExactly(pki);
        assertThat(Owned.leftovers(parent, "kube-test")).containsExactly(other);
        assertThat(Owned.leftovers(parent.resolve("absent"), "kube-test")).isEmpty();
    }

    @Test
    void deleteTreeOfNothingIsNothing(@TempDir Path parent) {
        Owned.deleteTree(null);
        Owned.deleteTree(parent.resolve("absent"));
        assertThat(parent).isEmptyDirectory();
    }

    /** A pid that ran and is gone: a process of our own that has exited and been reaped. */
    private static long deadPid() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        assertThat(ProcessHandle.of(p.pid())).as("reaped").isEmpty();
        return p.pid();
    }
}
