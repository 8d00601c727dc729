package calico.api.model;

import static calico.api.model.RoundTrip.assertAllLossless;
import static calico.api.model.RoundTrip.resource;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The {@code projectcalico.org/v3} manifests of the architecture guide seed parse and round-trip losslessly. */
class SeedManifestsTest {

    private static final List<String> FILES = List.of(
            "seeds/felixconfiguration-default.yaml",
            "seeds/bgpconfiguration-node-mesh.yaml",
            "seeds/route-reflector.yaml",
            "seeds/bgppeer-tor-switch.yaml");

    @ParameterizedTest
    @ValueSource(strings = {
            "seeds/felixconfiguration-default.yaml",
            "seeds/bgpconfiguration-node-mesh.yaml",
            "seeds/route-reflector.yaml",
            "seeds/bgppeer-tor-switch.yaml"})
    void everyDocumentRoundTripsWithoutLoss(String file) {
        assertThat(assertAllLossless(resource(file))).isNotEmpty();
    }

    @Test
    void theSeedHasSixCalicoManifestsOfTheExpectedKinds() {
        List<Resource> all = new ArrayList<>();
        FILES.forEach(f -> all.addAll(RoundTrip.CODEC.parseAll(resource(f))));
        assertThat(all).extracting(Resource::kind).containsExactly(
                "FelixConfiguration", "BGPConfiguration", "BGPConfiguration", "Node", "BGPPeer", "BGPPeer");
    }

    @Test
    void felixConfigurationKeepsOldAndNewFieldNamesApart() {
        var felix = (FelixConfiguration) RoundTrip.CODEC.parse(resource("seeds/felixconfiguration-default.yaml"));
        FelixConfigurationSpec s = felix.spec();
        assertThat(s.logSeverityScreen()).isEqualTo("Info");
        assertThat(s.bpfEnabled()).isFalse();
        assertThat(s.bpfDataIfacePattern()).isEqualTo("^((en|wl|eth).*|bond[0-9]+)$");
        assertThat(s.iptablesRefreshInterval()).isEqualTo("90s");
        assertThat(s.iptablesPostWriteCheckIntervalSecs()).isEqualTo(1);
        assertThat(s.iptablesPostWriteCheckInterval()).isNull();
        assertThat(s.iptablesLockTimeoutSecs()).isZero();
        assertThat(s.iptablesLockProbeIntervalMillis()).isEqualTo(50);
        assertThat(s.reportingIntervalSecs()).isEqualTo(30);
        assertThat(s.reportingTTLSecs()).isEqualTo(90);
        assertThat(s.effectiveReportingInterval()).isEqualTo("30s");
        assertThat(s.failsafeInboundHostPorts()).containsExactly(
                new FelixConfigurationSpec.ProtoPort("TCP", 22, null),
                new FelixConfigurationSpec.ProtoPort("UDP", 68, null));
        assertThat(s.failsafeOutboundHostPorts()).extracting(FelixConfigurationSpec.ProtoPort::port).containsExactly(53, 67);
        assertThat(s.prometheusMetricsPort()).isEqualTo(9091);
    }

    @Test
    void bgpResourcesCarryTheirValues() {
        List<Resource> rr = RoundTrip.CODEC.parseAll(resource("seeds/route-reflector.yaml"));
        var config = (BGPConfiguration) rr.get(0);
        assertThat(config.spec().nodeToNodeMeshEnabled()).isFalse();
        assertThat(config.spec().asNumber()).isEqualTo(ASNumber.of(64512));
        var node = (Node) rr.get(1);
        assertThat(node.metadata().labels()).containsEntry("route-reflector", "true");
        assertThat(node.spec().bgp().routeReflectorClusterID()).isEqualTo("224.0.0.1");
        assertThat(node.status()).isNull();
        var peer = (BGPPeer) rr.get(2);
        assertThat(peer.spec().nodeSelector()).isEqualTo("!has(route-reflector)");
        assertThat(peer.spec().peerSelector()).isEqualTo("route-reflector == \"true\"");

        var tor = (BGPPeer) RoundTrip.CODEC.parse(resource("seeds/bgppeer-tor-switch.yaml"));
        assertThat(tor.spec().peerIP()).isEqualTo("10.0.0.1");
        assertThat(tor.spec().asNumber().value()).isEqualTo(65001);
        assertThat(tor.spec().password()).isEqualTo(BGPPassword.fromSecret("bgp-passwords", "tor-password"));
        assertThat(tor.spec().sourceAddress()).isEqualTo(BGPPeerSpec.SourceAddress.UseNodeIP);
        assertThat(tor.spec().keepOriginalNextHop()).isFalse();
    }
}
