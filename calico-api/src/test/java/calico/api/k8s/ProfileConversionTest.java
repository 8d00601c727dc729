package calico.api.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.codec.ResourceCodec;
import calico.api.model.Profile;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Namespaces and ServiceAccounts → the Profiles that pass their labels to endpoints. */
class ProfileConversionTest {

    private final KubernetesObjects objects = new KubernetesObjects();
    private final KubernetesConverter converter = new KubernetesConverter();
    private final ResourceCodec codec = ResourceCodec.get();

    static Stream<Arguments> namespaces() {
        return Stream.of(
                Arguments.of("a namespace as the API server sends it (JSON, status, managedFields)",
                        """
                        {"apiVersion":"v1","kind":"Namespace",
                         "metadata":{"name":"shop","uid":"9a8b7c6d-1234-4abc-8def-0123456789ab","resourceVersion":"812",
                           "creationTimestamp":"2024-04-30T08:00:00Z",
                           "labels":{"kubernetes.io/metadata.name":"shop","team":"web"},
                           "managedFields":[{"manager":"kubectl-create","operation":"Update","fieldsType":"FieldsV1"}]},
                         "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}
                        """,
                        """
                        apiVersion: projectcalico.org/v3
                        kind: Profile
                        metadata:
                          name: kns.shop
                          uid: 59d13eb6-482c-4a3d-8df7-80c4a2e691d5
                          resourceVersion: 812/
                          creationTimestamp: "2024-04-30T08:00:00Z"
                        spec:
                          ingress: [{action: Allow}]
                          egress: [{action: Allow}]
                          labelsToApply:
                            pcns.kubernetes.io/metadata.name: shop
                            pcns.team: web
                            pcns.projectcalico.org/name: shop
                        """),
                Arguments.of("a namespace without labels still gets its name label",
                        """
                        apiVersion: v1
                        kind: Namespace
                        metadata: {name: empty}
                        """,
                        """
                        apiVersion: projectcalico.org/v3
                        kind: Profile
                        metadata: {name: kns.empty}
                        spec:
                          ingress: [{action: Allow}]
                          egress: [{action: Allow}]
                          labelsToApply: {pcns.projectcalico.org/name: empty}
                        """));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("namespaces")
    void namespaceBecomesKnsProfile(String rule, String kubernetes, String expected) {
        Profile p = converter.namespaceProfile(objects.parse(kubernetes, KubeNamespace.class));

        assertThat(p).isEqualTo(codec.parse(expected));
        assertThat(codec.parse(codec.toYaml(p))).isEqualTo(p);
    }

    static Stream<Arguments> serviceAccounts() {
        return Stream.of(
                Arguments.of("a service account with labels",
                        """
                        apiVersion: v1
                        kind: ServiceAccount
                        metadata:
                          name: api-reader
                          namespace: shop
                          uid: 6f1f4c1e-3b2a-4b5e-9c1d-2a7e5f0b8d31
                          resourceVersion: "77"
                          creationTimestamp: "2024-05-02T09:30:00Z"
                          labels: {app: api, tier: backend}
                        secrets:
                        - name: api-reader-token-x7k2p
                        automountServiceAccountToken: false
                        """,
                        """
                        apiVersion: projectcalico.org/v3
                        kind: Profile
                        metadata:
                          name: ksa.shop.api-reader
                          uid: f6f83278-dc54-4b7a-9cb8-547efad0b18c
                          resourceVersion: /77
                          creationTimestamp: "2024-05-02T09:30:00Z"
                        spec:
                          labelsToApply:
                            pcsa.app: api
                            pcsa.tier: backend
                            pcsa.projectcalico.org/name: api-reader
                        """),
                Arguments.of("a service account with a dotted name and no labels",
                        """
                        apiVersion: v1
                        kind: ServiceAccount
                        metadata: {name: build.bot, namespace: ci}
                        """,
                        """
                        apiVersion: projectcalico.org/v3
                        kind: Profile
                        metadata: {name: ksa.ci.build.bot}
                        spec:
                          labelsToApply: {pcsa.projectcalico.org/name: build.bot}
                        """));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("serviceAccounts")
    void serviceAccountBecomesKsaProfile(String rule, String kubernetes, String expected) {
        Profile p = converter.serviceAccountProfile(objects.parse(kubernetes, KubeServiceAccount.class));

        assertThat(p).isEqualTo(codec.parse(expected));
        assertThat(codec.parse(codec.toYaml(p))).isEqualTo(p);
    }

    @Test
    void profileYamlCarriesPrefixedLabels() {
        var ns = new KubeNamespace(KubeObjectMeta.of(null, "dev", Map.of("env", "dev")));

        String yaml = codec.toYaml(converter.namespaceProfile(ns));

        assertThat(yaml).contains("name: kns.dev", "pcns.env: dev", "pcns.projectcalico.org/name: dev",
                "action: Allow");
    }

    @Test
    void anEmptyNamespaceMeansDefaultInServiceAccountProfileNames() {
        assertThat(ProfileConverter.serviceAccountProfileName("", "sa")).isEqualTo("ksa.default.sa");
        assertThat(ProfileConverter.serviceAccountProfileName("ns", "sa")).isEqualTo("ksa.ns.sa");
    }

    @Test
    void refusesNamelessObjectsAndMalformedUids() {
        assertThatThrownBy(() -> converter.namespaceProfile(new KubeNamespace(KubeObjectMeta.of(null, "", null))))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.name: is required");
        var badUid = new KubeServiceAccount(new KubeObjectMeta("sa", "ns", null, "1234", null, null, null, null, null));
        assertThatThrownBy(() -> converter.serviceAccountProfile(badUid))
                .isInstanceOf(KubernetesConversionException.class)
                .hasMessageContaining("metadata.uid: \"1234\" is not a UUID");
    }

    @Test
    void profileNamesMapBackToTheirSources() {
        assertThat(ProfileConverter.namespaceOf("kns.default")).contains("default");
        assertThat(ProfileConverter.namespaceOf("ns.projectcalico.org/default")).isEmpty();
        assertThat(ProfileConverter.namespaceOf("kns.")).isEmpty();
        assertThat(ProfileConverter.serviceAccountOf("ksa.default.test"))
                .contains(new ProfileConverter.ServiceAccountRef("default", "test"));
        assertThat(ProfileConverter.serviceAccountOf("ksa.default.test.foo"))
                .contains(new ProfileConverter.ServiceAccountRef("default", "test.foo"));
        assertThat(ProfileConverter.serviceAccountOf("ksa.default")).isEmpty();
        assertThat(ProfileConverter.serviceAccountOf("kns.default")).isEmpty();
        assertThat(NetworkPolicyConverter.kubernetesName("knp.default.allow-web")).contains("allow-web");
        assertThat(NetworkPolicyConverter.kubernetesName("default.allow-web")).isEmpty();
    }
}
