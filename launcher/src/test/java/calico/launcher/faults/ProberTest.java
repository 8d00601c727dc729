package calico.launcher.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The prober's two probes against loopback servers: what counts as ok and what as a probe error. */
class ProberTest {

    /** A server answering each connection with {@code answer} and closing, as the demo pods' socat does. */
    private static ServerSocket server(String answer) throws IOException {
        ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!s.isClosed()) {
                try (Socket c = s.accept()) {
                    c.getOutputStream().write((answer + "\n").getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
        return s;
    }

    private static InetSocketAddress at(ServerSocket s) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), s.getLocalPort());
    }

    private static InetSocketAddress closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return at(s);
        }
    }

    @Test
    void anAllowedProbeIsOkOnlyWithTheServersAnswerAndADeniedOneOnlyWhenItDoesNotConnect() throws IOException {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        try (ServerSocket frontend = server("reply from shop/frontend"); ServerSocket other = server("reply from elsewhere");
             ServerSocket database = server("reply from data/database")) {
            Prober good = new Prober(at(frontend), "reply from shop/frontend", closedPort(), out);
            assertThat(good.probeAllowed(5).ok()).isTrue();
            assertThat(good.probeAllowed(5).at()).isEqualTo(5);
            assertThat(good.probeDenied(6)).isEqualTo(new Probe(6, Probe.Kind.DENIED, true, "refused"));

            Prober wrong = new Prober(at(other), "reply from shop/frontend", at(database), out);
            assertThat(wrong.probeAllowed(7).ok()).isFalse();
            assertThat(wrong.probeAllowed(7).detail()).contains("reply from elsewhere");
            assertThat(wrong.probeDenied(8)).isEqualTo(new Probe(8, Probe.Kind.DENIED, false, "connected"));

            Prober down = new Prober(closedPort(), "reply from shop/frontend", closedPort(), out);
            assertThat(down.probeAllowed(9).ok()).isFalse();
        }
    }
}
