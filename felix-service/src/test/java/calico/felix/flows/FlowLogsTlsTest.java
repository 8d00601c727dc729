package calico.felix.flows;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.TestCertificates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flow logs reach goldmane over mutual TLS with felix's client certificate (Calico's typha client
 * files, {@link ClientCertificate}) and only so: a real goldmane in process that asks for a client
 * certificate from its CA refuses a felix in plain text and one with a certificate from another
 * CA; felix refuses a goldmane whose certificate does not chain to felix's CA, or, from the right
 * CA, does not name the address felix dialled. Real NFLOG and conntrack sockets in a namespace of its own ({@code f6-tls-*}). That the
 * application hands FELIX_TYPHA{CA,CERT,KEY}FILE to flow logs, and flows arrive over TLS:
 * {@code e2e/FlowLogsE2ETest#nftablesOverMutualTls}.
 */
class FlowLogsTlsTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);

    /** One FlowLogs sending to {@code target} with {@code tls}, and what it says of itself. */
    private record Sender(FlowLogs flowLogs, HealthAggregator health, SimpleMeterRegistry meters) {
        String detail() {
            return health.status("FlowLogs").orElseThrow().detail();
        }

        double gauge(String name) {
            return meters.get(name).gauge().value();
        }
    }

    private static Sender start(NetNs ns, String target, ClientCertificate tls) {
        HealthAggregator health = new HealthAggregator();
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        FlowLogs f = new FlowLogs("node-a", ns.name(), tls, new DataplaneModel(), Clock.systemUTC(), meters, health);
        f.apply(List.of(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of(
                "flowLogsGoldmaneServer", target, "flowLogsFlushInterval", "200ms")))));
        return new Sender(f, health, meters);
    }

    /** {@return the health detail once a stream to goldmane has failed and said why}; the channel never came up. */
    private static String refused(NetNs ns, String target, ClientCertificate tls, String who) {
        Sender s = start(ns, target, tls);
        try (FlowLogs ignored = s.flowLogs()) {
            Await.until(who + ": a failed stream to goldmane, in the health detail", DEADLINE,
                    () -> s.gauge("felix_flowlogs_goldmane_stream_errors") > 0 && s.detail().contains("stream failed"));
            assertThat(s.detail()).as(who).contains("goldmane " + target + " unreachable");
            assertThat(s.gauge("felix_flowlogs_goldmane_reachable")).as(who).isZero();
            assertThat(s.gauge("felix_flowlogs_reports_acked")).as(who).isZero();
            return s.detail();
        }
    }

    private static ClientCertificate of(TestCertificates c) {
        return new ClientCertificate(c.caCert(), c.clientCert(), c.clientKey());
    }

    @Test
    void goldmaneTakesFelixOnlyWithItsCertificateAndFelixTakesOnlyTheGoldmaneItDialled(@TempDir Path dir) {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        TestCertificates pki = TestCertificates.generate(dir.resolve("pki"));
        TestCertificates otherCa = TestCertificates.generate(dir.resolve("other"));
        try (NetNs ns = NetNs.create("f6-tls");
             InProcessGoldmane goldmane = new InProcessGoldmane(0, null, pki)) {
            refused(ns, goldmane.target(), null, "plain text");
            // Felix trusts goldmane's CA, but its own certificate is from another one.
            refused(ns, goldmane.target(), new ClientCertificate(pki.caCert(), otherCa.clientCert(), otherCa.clientKey()),
                    "a client certificate from another CA");
            // Felix's certificate is right, but it trusts another CA than goldmane's.
            refused(ns, goldmane.target(), new ClientCertificate(otherCa.caCert(), pki.clientCert(), pki.clientKey()),
                    "a CA goldmane's certificate does not chain to");

            Sender s = start(ns, goldmane.target(), of(pki));
            try (FlowLogs ignored = s.flowLogs()) {
                Await.until("over mutual TLS and healthy", DEADLINE, () -> s.detail().endsWith("; healthy")
                        && s.gauge("felix_flowlogs_goldmane_reachable") == 1.0);
                assertThat(s.detail()).startsWith("sending to goldmane at " + goldmane.target() + " over mutual TLS");
                assertThat(s.gauge("felix_flowlogs_goldmane_stream_errors")).isZero();
            }
        }

        // Goldmane's certificate is from the right CA but names another server: felix hangs up.
        Path[] elsewhere = pki.server("goldmane-elsewhere", "DNS:goldmane.elsewhere.svc");
        TestCertificates impostorPki = new TestCertificates(pki.caCert(), pki.caKey(), elsewhere[0], elsewhere[1],
                pki.clientCert(), pki.clientKey());
        try (NetNs ns = NetNs.create("f6-tls");
             InProcessGoldmane impostor = new InProcessGoldmane(0, null, impostorPki)) {
            String detail = refused(ns, impostor.target(), of(pki), "a goldmane certificate for another name");
            assertThat(detail).as("the reason names the address the certificate lacks")
                    .contains("subject alternative names matching IP address 127.0.0.1");
        }
    }
}
