package calico.dataplane.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LoopbackForwardTest {

    @Test
    void loopbackInsideTheNamespaceReachesTheServerHereUntilClosed() throws Exception {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("calico-t"); ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            int port = server.getLocalPort();
            Thread echo = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept()) {
                        // Echo until the client half-closes, then answer with what it sent, upper-cased.
                        byte[] got = s.getInputStream().readAllBytes();
                        s.getOutputStream().write(new String(got, StandardCharsets.UTF_8).toUpperCase()
                                .getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        // closed
                    }
                }
            });
            echo.setDaemon(true);
            echo.start();
            // Without the forward, the namespace's own loopback has nothing on that port.
            assertThat(ns.tcpConnects("127.0.0.1", port, Duration.ofMillis(300))).isFalse();
            try (LoopbackForward f = LoopbackForward.into(ns, port)) {
                String answer = ns.call(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
                        s.getOutputStream().write("through".getBytes(StandardCharsets.UTF_8));
                        s.shutdownOutput(); // the half-close reaches the server
                        return new String(new DataInputStream(s.getInputStream()).readAllBytes(), StandardCharsets.UTF_8);
                    }
                });
                assertThat(answer).isEqualTo("THROUGH");
            }
            assertThatThrownBy(() -> ns.call(() -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
                    return s;
                }
            })).hasMessageContaining("Connection refused");
        }
    }
}
