package calico.apiserver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.discovery.KindCatalog;
import calico.apiserver.http.Http;
import calico.controlplane.ControlPlane;
import calico.controlplane.Pki;
import calico.libcalico.testing.KubeControlPlaneExtension;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The server as the aggregated API of a real kube-apiserver (see {@link AggregatedApiServer}):
 * the APIService is available, kube-apiserver serves the server's own discovery, users are who
 * the cluster says (front proxy, client certificates of the cluster CA, reviewed bearer tokens)
 * and may do what the cluster's RBAC objects grant, Calico's tier rule included.
 */
class AggregationTest {

    static final String GROUP_VERSION = "/apis/projectcalico.org/v3";
    static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutControllers();

    static AggregatedApiServer aggregated;

    @BeforeAll
    static void start() {
        aggregated = AggregatedApiServer.start(KUBE.controlPlane(), "--apiserver.datastore-type=kubernetes",
                "--apiserver.kubeconfig=" + KUBE.kubeconfig());
    }

    @AfterAll
    static void stop() {
        if (aggregated != null) {
            aggregated.close();
        }
    }

    static ControlPlane cp() {
        return KUBE.controlPlane();
    }

    /** kubectl as the user of {@code kubeconfig} (a client certificate), straight to the server, trusting its own certificate. */
    static ControlPlane.KubectlResult direct(Path kubeconfig, String... args) {
        List<String> all = new ArrayList<>(List.of("--server=" + aggregated.server().url(),
                "--certificate-authority=" + aggregated.server().dir().resolve("certs/apiserver.crt")));
        all.addAll(List.of(args));
        return cp().kubectlAs(kubeconfig, all.toArray(String[]::new));
    }

    @Test
    void theApiServiceIsAvailableAndKubeApiserverServesTheServersOwnDiscovery() throws Exception {
        assertThat(cp().kubectl("get", "apiservice", "v3.projectcalico.org", "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].status} {.status.conditions[?(@.type==\"Available\")].reason}"))
                .isEqualTo("True Passed");
        String through = cp().kubectl("get", "--raw", GROUP_VERSION);
        // Straight to the server with the admin's client certificate: the server trusts the
        // cluster CA only because the authentication ConfigMap names it (no --client-ca-file).
        ControlPlane.KubectlResult direct = direct(cp().adminKubeconfig(), "get", "--raw", GROUP_VERSION);
        assertThat(direct.exitCode()).as(direct.output()).isZero();
        assertThat(JSON.readTree(through)).isEqualTo(JSON.readTree(direct.output()));
        assertThat(JSON.readTree(through).path("resources").size()).isGreaterThan(20);
    }

    @Test
    void kubeApiserversOpenApiV2WithTheServersSpecMergedStillTurnsIntoProtobuf() {
        // kubectl's validation asks for it as protobuf; a keyword gnostic refuses in the server's
        // v2 document (nullable) made kube-apiserver answer 503 for the whole cluster's spec.
        Pki.Pair admin = cp().pki().client("admin", "kubernetes-admin", List.of("system:masters"));
        Http kube = new Http(cp().apiServerUrl().toString(), null, Http.tls(cp().pki().caCert(), admin.cert(), admin.key()));
        var proto = kube.send(kube.request("/openapi/v2")
                .header("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"));
        assertThat(proto.statusCode()).isEqualTo(200);
        assertThat(proto.body()).contains("org.projectcalico.api.v3.GlobalNetworkPolicy");
    }

    @Test
    void apiResourcesListsEveryKind() {
        Set<String> listed = new TreeSet<>(List.of(cp().kubectl("api-resources", "--api-group=projectcalico.org", "-o", "name")
                .trim().split("\n")));
        Set<String> kinds = KindCatalog.kinds().stream().map(k -> k.plural() + ".projectcalico.org")
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(listed).isEqualTo(kinds);
    }

    @Test
    void aUserWithoutRbacRightsIsRefused() {
        Path bob = cp().kubeconfig("bob", List.of());
        String refusal = "globalnetworkpolicies.projectcalico.org is forbidden: User \"bob\" cannot list resource "
                + "\"globalnetworkpolicies\" in API group \"projectcalico.org\" at the cluster scope";
        ControlPlane.KubectlResult through = cp().kubectlAs(bob, "get", "globalnetworkpolicies");
        assertThat(through.exitCode()).isNotZero();
        assertThat(through.output()).contains("Forbidden").contains(refusal);
        // The server refuses him by itself too (its SubjectAccessReview), when asked straight.
        ControlPlane.KubectlResult direct = direct(bob, "get", "globalnetworkpolicies");
        assertThat(direct.exitCode()).isNotZero();
        assertThat(direct.output()).contains(refusal);
    }

    @Test
    void rolesAndBindingsGrantAccessIncludingTheTierRule() {
        cp().kubectlWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: team-a}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: team-b}
                ---
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: open}
                spec: {order: 100}
                ---
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: closed}
                spec: {order: 200}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: open.visible}
                spec: {tier: open, selector: all()}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: closed.hidden}
                spec: {tier: closed, selector: all()}
                ---
                apiVersion: projectcalico.org/v3
                kind: NetworkPolicy
                metadata: {name: open.team-policy, namespace: team-a}
                spec: {tier: open, selector: all()}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: open-tier-reader}
                rules:
                - {apiGroups: [projectcalico.org], resources: [tiers], resourceNames: [open], verbs: [get]}
                - {apiGroups: [projectcalico.org], resources: [globalnetworkpolicies], verbs: [get, list, watch]}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: carol-open-tier-reader}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: open-tier-reader}
                subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: policy-editor, namespace: team-a}
                rules:
                - {apiGroups: [projectcalico.org], resources: [networkpolicies], verbs: [get, list, watch, create, delete]}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: carol-policy-editor, namespace: team-a}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: policy-editor}
                subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}]
                """, "apply", "-f", "-");
        Path carol = cp().kubeconfig("carol", List.of());

        assertThat(ok(cp().kubectlAs(carol, "get", "gnp", "open.visible", "-o", "name")))
                .isEqualTo("globalnetworkpolicy.projectcalico.org/open.visible\n");
        // kube-apiserver lets the get through (carol may get globalnetworkpolicies); the server's
        // tier rule, asked of the cluster's RBAC, refuses it.
        ControlPlane.KubectlResult closed = cp().kubectlAs(carol, "get", "gnp", "closed.hidden");
        assertThat(closed.exitCode()).isNotZero();
        assertThat(closed.output()).contains("Forbidden").contains("user needs get access to tier \"closed\"");
        assertThat(ok(cp().kubectlAs(carol, "get", "gnp", "-o", "name")))
                .contains("open.visible").doesNotContain("closed.hidden");

        // The RoleBinding grants team-a's policies, in tier open only, and nothing in team-b.
        assertThat(ok(cp().kubectlAs(carol, "get", "caliconetworkpolicies", "-n", "team-a", "-o", "name")))
                .isEqualTo("networkpolicy.projectcalico.org/open.team-policy\n");
        ControlPlane.KubectlResult created = createAs(carol, "team-a", "open");
        assertThat(created.exitCode()).as(created.output()).isZero();
        ControlPlane.KubectlResult otherTier = createAs(carol, "team-a", "closed");
        assertThat(otherTier.output()).contains("Forbidden").contains("user needs get access to tier \"closed\"");
        ControlPlane.KubectlResult otherNamespace = cp().kubectlAs(carol, "get", "caliconetworkpolicies", "-n", "team-b");
        assertThat(otherNamespace.output()).contains("Forbidden").contains("in the namespace \"team-b\"");
    }

    private static ControlPlane.KubectlResult createAs(Path user, String namespace, String tier) {
        Path file = aggregated.server().dir().resolve("np-" + tier + ".yaml");
        try {
            Files.writeString(file, """
                    apiVersion: projectcalico.org/v3
                    kind: NetworkPolicy
                    metadata: {name: %1$s.by-carol, namespace: %2$s}
                    spec: {tier: %1$s, selector: all()}
                    """.formatted(tier, namespace));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return cp().kubectlAs(user, "create", "-f", file.toString());
    }

    @Test
    void bearerTokensAreReviewedByTheClusterAndTheAnswerIsCached() {
        cp().kubectlWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: tokens}
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: reviewer, namespace: tokens}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: set-lister}
                rules: [{apiGroups: [projectcalico.org], resources: [globalnetworksets], verbs: [list]}]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: reviewer-set-lister}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: set-lister}
                subjects: [{kind: ServiceAccount, name: reviewer, namespace: tokens}]
                """, "apply", "-f", "-");
        String token = cp().kubectl("create", "token", "reviewer", "-n", "tokens").trim();
        // Straight to the server: only a TokenReview can tell it who this is.
        Kubectl reviewed = new Kubectl(cp().binaries().kubectl(), aggregated.server().url(), token);
        double before = reviews("201");
        Kubectl.Result list = reviewed.run(null, "get", "globalnetworksets");
        assertThat(list.exit()).as(list.all()).isZero();
        Kubectl.Result tiers = reviewed.run(null, "get", "tiers");
        assertThat(tiers.err()).contains("User \"system:serviceaccount:tokens:reviewer\" cannot list resource \"tiers\"");
        // kubectl sent several requests (discovery, then the lists) with the token: one review answered them all.
        assertThat(reviews("201") - before).isEqualTo(1);

        // An unknown token is 401. kube-apiserver's review of it carries an error, and k8s caches
        // no review that carries an error: each of kubectl's requests asks again.
        assertThat(cp().kubectlWithInput("""
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "not-a-token"}}
                """, "create", "-f", "-", "-o", "jsonpath={.status.authenticated}/{.status.error}"))
                .isEqualTo("/invalid bearer token");
        double beforeUnknown = reviews("201");
        Kubectl.Result unknown = new Kubectl(cp().binaries().kubectl(), aggregated.server().url(), "not-a-token")
                .run(null, "get", "globalnetworksets");
        assertThat(unknown.exit()).isNotZero();
        assertThat(unknown.err()).contains("You must be logged in to the server");
        assertThat(reviews("201") - beforeUnknown).isGreaterThan(1);
    }

    /** {@return the server's count of TokenReviews answered with {@code code}}. */
    private static double reviews(String code) {
        String sample = "apiserver_delegated_authn_request_total{application=\"apiserver\",code=\"" + code + "\"}";
        String metrics = new Http("http://localhost:" + aggregated.server().managementPort(), null)
                .get("/actuator/prometheus").body();
        for (String line : metrics.split("\n")) {
            if (line.startsWith(sample + " ")) {
                return Double.parseDouble(line.substring(sample.length() + 1).trim());
            }
        }
        return 0;
    }

    private static String ok(ControlPlane.KubectlResult r) {
        assertThat(r.exitCode()).as(r.output()).isZero();
        return r.output();
    }
}
