package calico.api.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Behaviour of the spec records beyond parsing: immutability, conversions, helpers. */
class SpecsTest {

    @Test
    void felixOlderIntegerFieldsLiveBesideTheDurationFields() {
        String doc = """
                apiVersion: projectcalico.org/v3
                kind: FelixConfiguration
                metadata: {name: default}
                spec:
                  reportingInterval: 45s
                  reportingIntervalSecs: 30
                  iptablesLockProbeInterval: 25ms
                  iptablesLockProbeIntervalMillis: 50
                """;
        var spec = ((FelixConfiguration) RoundTrip.CODEC.parse(doc)).spec();
        assertThat(spec.reportingInterval()).isEqualTo("45s");
        assertThat(spec.reportingIntervalSecs()).isEqualTo(30);
        assertThat(spec.effectiveReportingInterval()).isEqualTo("45s");
        assertThat(spec.iptablesLockProbeInterval()).isEqualTo("25ms");
        assertThat(spec.iptablesLockProbeIntervalMillis()).isEqualTo(50);
        assertThat(RoundTrip.CODEC.toJson(RoundTrip.CODEC.parse(doc)))
                .contains("\"reportingInterval\":\"45s\"", "\"reportingIntervalSecs\":30",
                        "\"iptablesLockProbeIntervalMillis\":50");
    }

    @Test
    void emptyFelixSpecHasEveryFieldUnsetAndWritesAsAnEmptyObject() {
        var empty = FelixConfigurationSpec.empty();
        assertThat(FieldCoverage.setFields(empty)).isEmpty();
        assertThat(FelixConfigurationSpec.class.getRecordComponents()).hasSize(FelixConfigurationSpec.FIELD_COUNT);
        assertThat(empty.effectiveReportingInterval()).isNull();
        var felix = new FelixConfiguration(ObjectMeta.named("default"), empty);
        assertThat(RoundTrip.CODEC.toJson(felix)).endsWith("\"spec\":{}}");
    }

    @Test
    void listsAndMapsAreCopiedAndUnmodifiable() {
        List<String> ips = new ArrayList<>(List.of("10.0.0.1"));
        var hep = new HostEndpointSpec("node-1", "eth0", ips, null, null);
        ips.add("10.0.0.2");
        assertThat(hep.expectedIPs()).containsExactly("10.0.0.1");
        assertThat(hep.profiles()).isEmpty();
        assertThatThrownBy(() -> hep.expectedIPs().add("x")).isInstanceOf(UnsupportedOperationException.class);

        var status = new KubeControllersConfigurationStatus(null, new java.util.HashMap<>(Map.of("A", "b")));
        assertThatThrownBy(() -> status.environmentVars().put("C", "d")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(new NodeStatus(null, null, null).podCIDRs()).isEmpty();
    }

    @Test
    void stagedPoliciesConvertToAndFromTheirEnforcedSpecs() {
        var gnp = (GlobalNetworkPolicy) RoundTrip.CODEC.parse(RoundTrip.resource("model/rich/GlobalNetworkPolicy.yaml"));
        var staged = StagedGlobalNetworkPolicySpec.of(StagedAction.Set, gnp.spec());
        assertThat(staged.stagedAction()).isEqualTo(StagedAction.Set);
        assertThat(staged.toEnforced()).isEqualTo(gnp.spec());

        var np = (NetworkPolicy) RoundTrip.CODEC.parse(RoundTrip.resource("model/rich/NetworkPolicy.yaml"));
        var stagedNp = StagedNetworkPolicySpec.of(StagedAction.Delete, np.spec());
        assertThat(stagedNp.toEnforced()).isEqualTo(np.spec());
        // The staged rich example is the enforced one plus stagedAction, so they convert exactly.
        var fromFile = (StagedNetworkPolicy) RoundTrip.CODEC.parse(RoundTrip.resource("model/rich/StagedNetworkPolicy.yaml"));
        assertThat(fromFile.spec()).isEqualTo(stagedNp);
    }

    @Test
    void statusIsKeptAcrossMetadataChangesAndOmittedWhenAbsent() {
        var node = new Node(ObjectMeta.named("n1"), NodeSpec.ofBgp(new NodeSpec.BGP(ASNumber.of(64512),
                "10.0.0.1/24", null, null, null)));
        assertThat(node.status()).isNull();
        assertThat(RoundTrip.CODEC.toJson(node)).doesNotContain("status").doesNotContain("null");
        var withStatus = node.withStatus(new NodeStatus("key=", null, List.of("192.168.0.0/24")));
        var renamed = withStatus.withMetadata(ObjectMeta.named("n2"));
        assertThat(renamed.status()).isEqualTo(withStatus.status());
        assertThat(RoundTrip.CODEC.toJson(renamed))
                .endsWith("\"status\":{\"wireguardPublicKey\":\"key=\",\"podCIDRs\":[\"192.168.0.0/24\"]}}");

        var kcc = new KubeControllersConfiguration(ObjectMeta.named("default"),
                new KubeControllersConfigurationSpec("Info", ControllerMode.Enabled, null, 9094, null, null));
        assertThat(RoundTrip.CODEC.toJson(kcc)).doesNotContain("status").doesNotContain("null");
        var running = kcc.withStatus(new KubeControllersConfigurationStatus(kcc.spec(), Map.of("LOG_LEVEL", "info")));
        assertThat(running.withMetadata(ObjectMeta.named("default")).status().runningConfig()).isEqualTo(kcc.spec());
    }

    @Test
    void noNullsAreWrittenForAbsentParts() {
        var pool = new IPPool(ObjectMeta.named("p"), IPPoolSpec.ofCidr("10.0.0.0/16"));
        assertThat(RoundTrip.CODEC.toJson(pool)).isEqualTo(
                "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p\"},"
                        + "\"spec\":{\"cidr\":\"10.0.0.0/16\"}}");
        var noSpec = new ClusterInformation(ObjectMeta.named("default"), null);
        assertThat(RoundTrip.CODEC.toJson(noSpec)).doesNotContain("null").doesNotContain("spec");
    }
}
