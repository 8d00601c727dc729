package calico.confd.e2e;

import static calico.confd.Fixtures.affinity;
import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.config;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static calico.confd.Fixtures.pool;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ASNumber;
import calico.api.model.BGPPassword;
import calico.api.model.BGPPeerSpec;
import calico.confd.Await;
import calico.libcalico.bird.BirdProtocol;
import calico.confd.render.DirectorySecrets;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A BGP session protected by a TCP-MD5 password from {@code password.secretKeyRef}: two nodes
 * in network namespaces, each BIRD on the config its own confd rendered, each confd reading
 * the secret from its own mounted-secret directory ({@link DirectorySecrets}). With the same
 * password on both sides the session is Established; once one side's secret is rotated to a
 * different value (confd re-reads secrets every pass) the session goes down and stays down;
 * putting the right value back brings it up again.
 */
class PasswordBgpTest {

    private static final String SECRET = "bgp-passwords";
    private static final String KEY = "peer-password";
    /** How long a wrong password must keep the session from Established (BIRD retries every 5 s). */
    private static final Duration STAYS_DOWN = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    private NetnsLab lab;
    private MemoryDatastore datastore;
    private ConfdNodes confd;

    @AfterEach
    void tearDown() throws Exception {
        NetnsLab.closeAll(confd, datastore, lab);
    }

    @Test
    void samePasswordEstablishesAWrongOneDoesNot() throws Exception {
        NetnsLab.assumeBirdAndRoot();
        lab = new NetnsLab(tmp, 2, "b9");
        datastore = new MemoryDatastore();
        datastore.create(pool("pool", "10.98.0.0/16", false, false));
        datastore.create(bgpConfig("default", config(false, 64512L)));
        for (int i = 1; i <= 2; i++) {
            datastore.create(node("node-" + i, NetnsLab.address(i) + "/24"));
            datastore.create(affinity("node-" + i, "10.98." + i + ".0/26"));
        }
        // Every node peers with every other node, with the password from the secret.
        datastore.create(peer("all-with-password", new BGPPeerSpec(null, null, null, null, null, "all()", null,
                null, null, BGPPassword.fromSecret(SECRET, KEY), null, null, null, null, null, null)));
        confd = new ConfdNodes(lab, datastore);
        for (int i = 1; i <= 2; i++) {
            writeSecret(i, "same-s3cret");
            confd.start(i, new DirectorySecrets(secrets(i)), Duration.ofMillis(500));
        }
        confd.startBirds(2);
        assertThat(Files.readString(lab.config(1))).contains("password \"same-s3cret\";");

        // 1. Same password on both sides: Established, and the route crosses.
        awaitSession(1, "Global_10_99_0_2", true);
        awaitSession(2, "Global_10_99_0_1", true);
        await("node-1 learns node-2's block", () -> lab.birdRoutes(1).contains("10.98.2.0/26 via 10.99.0.2"));

        // 2. node-2's secret rotated to another value: its BIRD is reconfigured and the session drops.
        writeSecret(2, "not-the-same");
        await("node-2's config carries the new password",
                () -> Files.readString(lab.config(2)).contains("password \"not-the-same\";"));
        awaitSession(1, "Global_10_99_0_2", false);
        // Sampled over a window on purpose: with TCP MD5 the kernel drops the other side's
        // segments silently, so no event says "this session will never come up"; staying down
        // for STAYS_DOWN (several BIRD connect retries) is the claim.
        long until = System.nanoTime() + STAYS_DOWN.toNanos();
        while (System.nanoTime() < until) {
            assertThat(state(1, "Global_10_99_0_2").map(BirdProtocol::established))
                    .as("node-1's session with a wrong password on the other side").contains(false);
            assertThat(state(2, "Global_10_99_0_1").map(BirdProtocol::established))
                    .as("node-2's session with a wrong password").contains(false);
            Thread.sleep(500);
        }
        await("node-1 loses node-2's block", () -> !lab.birdRoutes(1).contains("10.98.2.0/26"));

        // 3. The right value back: Established again.
        writeSecret(2, "same-s3cret");
        awaitSession(1, "Global_10_99_0_2", true);
        awaitSession(2, "Global_10_99_0_1", true);
    }

    private Path secrets(int i) {
        return tmp.resolve("secrets-" + i);
    }

    private void writeSecret(int i, String value) throws IOException {
        Path dir = secrets(i).resolve(SECRET);
        Files.createDirectories(dir);
        Path tmpFile = dir.resolve("." + KEY + ".tmp");
        Files.writeString(tmpFile, value + "\n");
        Files.move(tmpFile, dir.resolve(KEY), java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private Optional<BirdProtocol> state(int i, String name) throws IOException {
        return lab.control(i).protocols().stream().filter(p -> p.name().equals(name)).findFirst();
    }

    private void awaitSession(int i, String name, boolean established) throws Exception {
        try {
            await("node-" + i + " " + name + (established ? " Established" : " not Established"),
                    () -> state(i, name).map(p -> p.established() == established).orElse(false));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nprotocols: " + lab.control(i).protocols() + "\nstatus: "
                    + confd.daemon(i).status() + "\nlog: " + lab.log(i), e);
        }
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(90), condition);
    }
}
