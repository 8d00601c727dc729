package calico.api.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.Action;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.Port;
import calico.api.model.Protocol;
import calico.api.model.ResourceKind;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResourceCodecTest {

    private final ResourceCodec codec = ResourceCodec.get();

    private static final String GNP = """
            apiVersion: projectcalico.org/v3
            kind: GlobalNetworkPolicy
            metadata:
              name: allow-dns
              labels: {team: net}
            spec:
              order: 100
              selector: all()
              types: [Egress]
              egress:
              - action: Allow
                protocol: UDP
                destination:
                  ports: [53, "8000:8080", dns]
                  nets: [10.0.0.0/8]
            """;

    @Test
    void managedFieldsRoundTripUntouched() {
        String json = "{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkSet\",\"metadata\":{"
                + "\"name\":\"m\",\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Apply\","
                + "\"apiVersion\":\"projectcalico.org/v3\",\"time\":\"2026-12-01T10:00:00Z\",\"fieldsType\":\"FieldsV1\","
                + "\"fieldsV1\":{\"f:spec\":{\"f:nets\":{}}}}]},\"spec\":{\"nets\":[\"10.0.0.0/8\"]}}";
        var r = codec.parse(json);
        var entry = r.metadata().managedFields().get(0);
        assertThat(entry.manager()).isEqualTo("kubectl");
        assertThat(entry.operation()).isEqualTo("Apply");
        assertThat(entry.fieldsV1()).isEqualTo(java.util.Map.of("f:spec", java.util.Map.of("f:nets", java.util.Map.of())));
        assertThat(codec.toTree(r).path("metadata").path("managedFields").get(0).path("fieldsV1").toString())
                .isEqualTo("{\"f:spec\":{\"f:nets\":{}}}");
        assertThat(codec.toTree(codec.parse(json.replace(",\"managedFields\":[{", ",\"x\":[{").replaceAll(",\"x\".*]}", "}")))
                .path("metadata").has("managedFields")).isFalse();
    }

    @Test
    void parsesAndRoundTripsAPolicy() {
        var gnp = (GlobalNetworkPolicy) codec.parse(GNP);
        assertThat(gnp.metadata().name()).isEqualTo("allow-dns");
        assertThat(gnp.spec().order()).isEqualTo(100.0);
        var rule = gnp.spec().egress().get(0);
        assertThat(rule.action()).isEqualTo(Action.Allow);
        assertThat(rule.protocol()).isEqualTo(Protocol.UDP);
        assertThat(rule.destination().ports()).containsExactly(Port.of(53), Port.range(8000, 8080), Port.named("dns"));

        String json = codec.toJson(gnp);
        assertThat(json).startsWith("{\"apiVersion\":\"projectcalico.org/v3\",\"kind\":\"GlobalNetworkPolicy\"");
        assertThat(json).contains("\"ports\":[53,\"8000:8080\",\"dns\"]");
        GlobalNetworkPolicy back = codec.read(ResourceKind.GLOBAL_NETWORK_POLICY, json.getBytes());
        assertThat(back).isEqualTo(gnp);
        assertThat(codec.parse(codec.toYaml(gnp))).isEqualTo(gnp);
    }

    @Test
    void expandsListsAndMultipleDocuments() {
        String list = """
                apiVersion: projectcalico.org/v3
                kind: TierList
                items:
                - apiVersion: projectcalico.org/v3
                  kind: Tier
                  metadata: {name: a}
                  spec: {order: 10}
                ---
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: b}
                spec: {order: 20, defaultAction: Pass}
                """;
        assertThat(codec.parseAll(list)).extracting(r -> r.metadata().name()).isEqualTo(List.of("a", "b"));
    }

    @Test
    void unknownFieldIsNamed() {
        assertThatThrownBy(() -> codec.parse(GNP.replace("selector: all()", "selectr: all()")))
                .isInstanceOf(ResourceParseException.class)
                .hasMessage("spec.selectr: unknown field");
    }

    @Test
    void badEnumValueIsNamedWithItsPath() {
        assertThatThrownBy(() -> codec.parse(GNP.replace("action: Allow", "action: allow")))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageStartingWith("spec.egress[0].action: invalid value \"allow\"");
    }

    @Test
    void wrongTypeIsNamed() {
        assertThatThrownBy(() -> codec.parse(GNP.replace("order: 100", "order: [1]")))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageStartingWith("spec.order: wrong type");
    }

    @Test
    void wrongApiVersionAndKindAreRejected() {
        assertThatThrownBy(() -> codec.parse(GNP.replace("projectcalico.org/v3", "crd.projectcalico.org/v1")))
                .hasMessageStartingWith("apiVersion: must be");
        assertThatThrownBy(() -> codec.parse(GNP.replace("kind: GlobalNetworkPolicy", "kind: Bogus")))
                .hasMessage("kind: unknown kind \"Bogus\"");
    }

    @Test
    void malformedYamlIsASyntaxError() {
        assertThatThrownBy(() -> codec.parse("apiVersion: [unclosed"))
                .isInstanceOf(ResourceParseException.class)
                .hasMessageContaining("malformed document");
    }

    @Test
    void scalarsOfTheWrongKindAreNotCoerced() {
        String fc = """
                apiVersion: projectcalico.org/v3
                kind: FelixConfiguration
                metadata: {name: default}
                spec: {%s}
                """;
        assertThatThrownBy(() -> codec.parse(fc.formatted("logSeverityScreen: 5")))
                .hasMessageStartingWith("spec.logSeverityScreen:");
        assertThatThrownBy(() -> codec.parse(fc.formatted("healthPort: 90.5")))
                .hasMessageStartingWith("spec.healthPort:");
        assertThatThrownBy(() -> codec.parse(fc.formatted("bpfEnabled: \"yes\"")))
                .hasMessageStartingWith("spec.bpfEnabled:");
    }

    @Test
    void numericLookingStringsStayStringsThroughYaml() {
        String ci = """
                apiVersion: projectcalico.org/v3
                kind: ClusterInformation
                metadata: {name: default, resourceVersion: "4711"}
                spec: {calicoVersion: "3.30", datastoreReady: true}
                """;
        var r = codec.parse(ci);
        assertThat(codec.parse(codec.toYaml(r))).isEqualTo(r);
        assertThat(codec.toYaml(r)).contains("calicoVersion: \"3.30\"");
    }

    @Test
    void listsAreWrittenAsKindListDocumentsThatParseBack() {
        var tiers = codec.parseAll("""
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: a}
                spec: {order: 10}
                ---
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: b}
                spec: {order: 20}
                """);
        var tree = codec.toListTree(ResourceKind.TIER, tiers, "42");
        assertThat(tree.get("kind").asText()).isEqualTo("TierList");
        assertThat(tree.at("/metadata/resourceVersion").asText()).isEqualTo("42");
        assertThat(codec.parseAll(codec.writeYaml(tree))).isEqualTo(tiers);
        assertThat(codec.parseAll(codec.writePrettyJson(tree))).isEqualTo(tiers);
    }
}
