package calico.confd.e2e;

import static calico.confd.Fixtures.bgpConfig;
import static calico.confd.Fixtures.config;
import static calico.confd.Fixtures.node;
import static calico.confd.Fixtures.peer;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ASNumber;
import calico.api.model.BGPPeerSpec;
import calico.confd.Await;
import calico.confd.render.SecretSource;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code reachableBy} in a real kernel: node-1's peer 10.77.0.2 is on no link of node-1 (it is
 * node-2's loopback address), so the session can only come up through the static route confd
 * renders to the peer via the gateway 10.99.0.2. The kernel gets that route from BIRD and the
 * session reaches Established.
 */
class ReachableByBgpTest {

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
    void staticRouteToThePeerViaTheGatewayBringsTheSessionUp() throws Exception {
        NetnsLab.assumeBirdAndRoot();
        lab = new NetnsLab(tmp, 2, "b9");
        NetnsLab.ip("-n", lab.ns(2), "addr", "add", "10.77.0.2/32", "dev", "lo");
        assertThat(NetnsLab.ip("-n", lab.ns(1), "route", "show", "10.77.0.2")).as("no route before").isBlank();

        datastore = new MemoryDatastore();
        datastore.create(bgpConfig("default", config(false, 64512L)));
        datastore.create(node("node-1", NetnsLab.address(1) + "/24"));
        datastore.create(node("node-2", NetnsLab.address(2) + "/24"));
        datastore.create(peer("to-loopback", new BGPPeerSpec("node-1", null, "10.77.0.2", ASNumber.of(64512), null,
                null, null, null, null, null, null, null, null, null, null, NetnsLab.address(2))));
        // node-2 answers on its loopback address: no fixed source address, the kernel's choice.
        datastore.create(peer("back-to-node-1", new BGPPeerSpec("node-2", null, NetnsLab.address(1),
                ASNumber.of(64512), null, null, null, null, null, null, BGPPeerSpec.SourceAddress.None, null, null,
                null, null, null)));
        confd = new ConfdNodes(lab, datastore);
        for (int i = 1; i <= 2; i++) {
            confd.start(i, SecretSource.none(), Duration.ofSeconds(1));
        }
        confd.startBirds(2);
        assertThat(Files.readString(lab.config(1))).contains("route 10.77.0.2/32 via 10.99.0.2;");

        await("node-1's kernel route to the peer via the gateway",
                () -> NetnsLab.ip("-n", lab.ns(1), "route", "show", "10.77.0.2").contains("via 10.99.0.2"));
        try {
            await("node-1's session to 10.77.0.2 Established", () -> lab.control(1).protocols().stream()
                    .anyMatch(p -> p.name().equals("Node_10_77_0_2") && p.established()));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nnode-1: " + lab.control(1).protocols() + "\nnode-2: "
                    + lab.control(2).protocols() + "\nlog 1: " + lab.log(1) + "\nlog 2: " + lab.log(2), e);
        }
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        Await.until(what, Duration.ofSeconds(90), condition);
    }
}
