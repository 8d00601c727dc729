package calico.launcher.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fault suite's parts that need no kernel: probe lines and their score, kernel change lines, the flow ledger. */
class FaultFiguresTest {

    private static Probe allowed(long at, boolean ok) {
        return new Probe(at, Probe.Kind.ALLOWED, ok, ok ? "answered" : "timeout");
    }

    private static Probe denied(long at, boolean ok) {
        return new Probe(at, Probe.Kind.DENIED, ok, ok ? "timeout" : "connected");
    }

    @Test
    void probeLinesRoundTripAndOtherLinesAreNotProbes() {
        Probe p = new Probe(1_765_000_000_123L, Probe.Kind.DENIED, false, "connected");
        assertThat(Probe.parse(p.line())).isEqualTo(p);
        assertThat(Probe.parse("probe 17 allowed ok answered")).isEqualTo(allowed(17, true));
        assertThat(Probe.parse("probe 17 allowed error Connection_refused")).isEqualTo(new Probe(17, Probe.Kind.ALLOWED, false, "Connection_refused"));
        assertThat(Probe.parse("Picked up JAVA_TOOL_OPTIONS: -Xmx1g")).isNull();
        assertThat(Probe.parse("probe x allowed ok")).isNull();
        assertThat(Probe.parse("probe 17 sideways ok")).isNull();
        assertThat(Probe.parse("probe 17 allowed maybe")).isNull();
    }

    @Test
    void scoreCountsAllowedFailuresAndDeniedSuccessesInTheWindowOnly() {
        List<Probe> probes = List.of(allowed(900, false), allowed(1000, true), denied(1000, true), allowed(1100, false),
                denied(1200, false), allowed(1300, true), denied(1300, true), allowed(2000, false));
        ProbeScore s = ProbeScore.of(probes, 1000, 2000);
        assertThat(s.probes()).isEqualTo(6);
        assertThat(s.allowedErrors()).isEqualTo(1);
        assertThat(s.deniedErrors()).isEqualTo(1);
        assertThat(s.errors()).isEqualTo(2);
        assertThat(s.lastErrorAt()).isEqualTo(1200);
        // Back at 1150: probes were normal again after the error at 1200, one interval later.
        assertThat(s.normalAgainAt(1150, 100)).isEqualTo(1300);
        // Back at 1250: no error after it; normal as soon as it is back.
        assertThat(s.normalAgainAt(1250, 100)).isEqualTo(1250);
        assertThat(ProbeScore.of(probes, 1300, 1400).lastErrorAt()).isEqualTo(-1);
    }

    @Test
    void kernelChangesAreTheMonitorsChangeLinesNotItsComments() {
        List<String> lines = List.of(
                "add table inet calico",
                "add chain inet calico filter-FORWARD { type filter hook forward priority filter; policy accept; }",
                "# new generation 5 by process 1234 (java)",
                "delete rule inet calico cali-fw-cali1234 handle 12",
                "add element inet calico cali40all-ipam-pools { 192.168.0.0/16 }",
                "",
                "Deleted 192.168.1.0/26 via 172.31.255.2 dev eth0 proto bird ",
                "192.168.1.0/26 via 172.31.255.2 dev eth0 proto bird ");
        assertThat(KernelChanges.count(lines)).isEqualTo(6);
        assertThat(KernelChanges.count(List.of("# new generation 6 by process 99 (nft)", "   "))).isZero();
    }

    @Test
    void bucketsAreAlignedToTheEpochWithAGuardBandAroundEachBoundary() {
        FlowBuckets b = FlowBuckets.GOLDMANE;
        assertThat(b.bucketOf(30_000)).isEqualTo(30_000);
        assertThat(b.bucketOf(44_999)).isEqualTo(30_000);
        assertThat(b.boundaryAtOrAfter(30_000)).isEqualTo(30_000);
        assertThat(b.boundaryAtOrAfter(30_001)).isEqualTo(45_000);
        assertThat(b.inGuardBand(30_000)).isTrue();
        assertThat(b.inGuardBand(30_999)).isTrue();
        assertThat(b.inGuardBand(31_000)).isFalse();
        assertThat(b.inGuardBand(43_999)).isFalse();
        assertThat(b.inGuardBand(44_000)).isTrue();
    }

    @Test
    void theLedgerPairsSentWithRecordedAndCountsLossesOverAWindow() {
        FlowBuckets b = FlowBuckets.GOLDMANE;
        List<Probe> probes = List.of(allowed(14_000, true), allowed(16_000, true), allowed(17_000, true), allowed(17_100, false),
                denied(17_200, true), allowed(31_000, true), allowed(46_000, true), allowed(61_000, true));
        Map<Long, Long> sent = b.sent(probes, 15_000, 60_000);
        assertThat(sent).containsExactly(Map.entry(15_000L, 2L), Map.entry(30_000L, 1L), Map.entry(45_000L, 1L));
        List<FlowBuckets.Bucket> ledger = FlowBuckets.compare(sent, Map.of(15_000L, 2L, 30_000L, 0L, 90_000L, 5L));
        assertThat(ledger).containsExactly(new FlowBuckets.Bucket(15_000, 2, 2), new FlowBuckets.Bucket(30_000, 1, 0),
                new FlowBuckets.Bucket(45_000, 1, 0));
        // Three faults: the first overlaps bucket 15 s and 1 s of bucket 30 s, the second 14 s of bucket 30 s and 2 s
        // of bucket 45 s, the third 13 s of bucket 45 s: each bucket's loss goes to the last fault killed in or
        // before it.
        List<FlowBuckets.Span> spans = List.of(new FlowBuckets.Span(16_000, 31_000, true), new FlowBuckets.Span(31_000, 47_000, true),
                new FlowBuckets.Span(47_000, 60_000, true));
        assertThat(b.lostPerSpan(ledger, spans)).containsExactly(0, 1, 1);
        // A fault killed late in a bucket (felix, 14 s into bucket 30 s after typha's window) takes its loss:
        // what felix had not flushed since the bucket began died with it.
        assertThat(b.lostPerSpan(ledger, List.of(new FlowBuckets.Span(20_000, 44_000, true), new FlowBuckets.Span(44_000, 46_000, true))))
                .containsExactly(0, 2);
        // BIRD (no flow record passes it) killed after felix in bucket 30 s: that loss stays felix's; in bucket 45 s
        // BIRD's window is alone, and the loss is still shown, against BIRD.
        assertThat(b.lostPerSpan(ledger, List.of(new FlowBuckets.Span(20_000, 44_000, true), new FlowBuckets.Span(44_000, 46_000, false))))
                .containsExactly(1, 1);
        assertThat(b.lostPerSpan(ledger, List.of(new FlowBuckets.Span(20_000, 46_000, false)))).containsExactly(2);
        assertThat(b.lostPerSpan(ledger, List.of())).isEmpty();
        // More recorded than sent (another client on the flow) is no negative loss.
        assertThat(new FlowBuckets.Bucket(0, 1, 3).lost()).isZero();
    }

    @Test
    void whiskersAnswerIsSummedPerReporter() {
        String body = """
                {"meta": {"totalResults": 3, "totalPages": 1},
                 "items": [
                  {"id": "1", "reporter": "Dst", "num_connections_started": 40, "source_labels": ["app=client"],
                   "policies": {"enforced": [{"name": "a\\"b", "trigger": null}], "pending": []}, "ok": true, "x": -1.5e2},
                  {"id": "2", "reporter": "Src", "num_connections_started": 39},
                  {"id": "3", "reporter": "Dst", "num_connections_started": 2}]}
                """;
        assertThat(WhiskerFlows.perReporter(body)).containsExactly(Map.entry("Dst", 42L), Map.entry("Src", 39L));
        assertThat(WhiskerFlows.perReporter("{\"meta\": {}, \"items\": []}")).isEmpty();
        assertThatThrownBy(() -> Json.parse("{\"items\": [1, 2}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("']' expected");
        assertThat(Json.parse("{\"s\": \"caf\\u00e9\\n\"}")).isEqualTo(Map.of("s", "café\n"));
    }

    @Test
    void ipamCheckSaysAddressesInUseAndProblems() {
        IpamCheck c = IpamCheck.parse("""
                Checking IPAM for inconsistencies...

                Found 2 IPAM blocks.
                Found 5 IPAM handles.
                Found 5 in-use IPs.
                  192.168.1.7 leaked: its owner (pod shop/flt-cni) no longer exists; handle k8s-pod-network.fa017
                Check complete; found 1 problems.
                """);
        assertThat(c.inUse()).isEqualTo(5);
        assertThat(c.problems()).isEqualTo(1);
        assertThatThrownBy(() -> IpamCheck.parse("calicoctl: connection refused")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("connection refused");
    }
}
