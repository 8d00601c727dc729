package calico.confd.render;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import calico.confd.ViewBuilder;
import calico.libcalico.testing.MockApiClients;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Peer passwords from a Kubernetes Secret (fabric8 mock API server), and a missing one skipped. */
@EnableKubernetesMockClient(crud = true)
class KubernetesSecretsTest {

    static KubernetesClient client;

    @Test
    void passwordFromSecretAndMissingKeySkipped() {
        try (KubernetesClient api = MockApiClients.loadTolerant(client)) {
            passwordFromSecretAndMissingKeySkipped(api);
        }
    }

    private static void passwordFromSecretAndMissingKeySkipped(KubernetesClient api) {
        api.secrets().inNamespace("kube-system").resource(new SecretBuilder().withNewMetadata()
                .withName("bgp-passwords").endMetadata()
                .withData(Map.of("tor-password", Base64.getEncoder().encodeToString(
                        "from-k8s".getBytes(StandardCharsets.UTF_8)))).build()).create();
        String yaml = """
                apiVersion: projectcalico.org/v3
                kind: Node
                metadata: {name: node-1}
                spec: {bgp: {ipv4Address: 10.0.0.1/24}}
                ---
                apiVersion: projectcalico.org/v3
                kind: BGPPeer
                metadata: {name: tor}
                spec: {peerIP: 10.0.0.254, asNumber: 65001, password: {secretKeyRef: {name: bgp-passwords, key: tor-password}}}
                ---
                apiVersion: projectcalico.org/v3
                kind: BGPPeer
                metadata: {name: other}
                spec: {peerIP: 10.0.0.253, asNumber: 65001, password: {secretKeyRef: {name: bgp-passwords, key: nope}}}
                """;
        Rendered r = new BirdConfigBuilder(new KubernetesSecrets(api, "kube-system")).render(new ViewBuilder()
                .add(ResourceCodec.get().parseAll(yaml).toArray(new Resource[0])).build(), "node-1", "");
        assertThat(r.config()).contains("password \"from-k8s\";");
        assertThat(r.sessions()).extracting(Session::name).containsExactly("Global_10_0_0_254");
        assertThat(r.skipped()).extracting(Skipped::reason)
                .containsExactly("spec.password: secret \"bgp-passwords\" has no key \"nope\" (or does not exist)");
    }
}
