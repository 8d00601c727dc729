package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;

import calico.apiserver.e2e.ApiServerFixture;
import calico.apiserver.http.Http;
import calico.libcalico.testing.TestCertificates;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * --authorization-kubeconfig: every decision is a SubjectAccessReview against a (mock) Kubernetes
 * API, which here allows user alice to list globalnetworksets and nothing else.
 */
class SubjectAccessReviewTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final List<JsonNode> REVIEWS = new CopyOnWriteArrayList<>();
    static KubernetesMockServer kube;
    static ApiServerFixture server;
    static TestCertificates proxies;

    @BeforeAll
    static void start() throws Exception {
        kube = new KubernetesMockServer(false);
        kube.init();
        kube.expect().post().withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews").andReply(201, req -> {
            try {
                ObjectNode sar = (ObjectNode) JSON.readTree(req.getBody().readUtf8());
                REVIEWS.add(sar);
                JsonNode spec = sar.path("spec");
                boolean allowed = spec.path("user").asText().equals("alice")
                        && spec.path("resourceAttributes").path("verb").asText().equals("list")
                        && spec.path("resourceAttributes").path("resource").asText().equals("globalnetworksets");
                sar.putObject("status").put("allowed", allowed);
                return sar;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).always();
        Path dir = Files.createTempDirectory("sar");
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: k, cluster: {server: "%s"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: c, context: {cluster: k, user: u}}]
                current-context: c
                """.formatted(kube.url("/")));
        proxies = TestCertificates.generate(dir.resolve("proxies"));
        server = ApiServerFixture.start(null, "--authorization-kubeconfig=" + kubeconfig,
                "--requestheader-client-ca-file=" + proxies.caCert(), "--requestheader-uid-headers=X-Remote-Uid");
    }

    @AfterAll
    static void stop() {
        server.close();
        kube.destroy();
    }

    @Test
    void aRepeatedDecisionIsAnsweredFromTheCacheWithinItsTtl() {
        Http alice = new Http(server.url(), ApiServerFixture.ALICE_TOKEN);
        String path = "/apis/projectcalico.org/v3/globalnetworksets/cached";
        assertThat(alice.get(path).statusCode()).isEqualTo(403);
        long asked = REVIEWS.stream().filter(r -> r.path("spec").path("resourceAttributes").path("name").asText()
                .equals("cached")).count();
        assertThat(alice.get(path).statusCode()).isEqualTo(403);
        assertThat(REVIEWS.stream().filter(r -> r.path("spec").path("resourceAttributes").path("name").asText()
                .equals("cached")).count()).as("the denial is kept for 10 s").isEqualTo(asked).isEqualTo(1);
    }

    @Test
    void theFrontProxysUidAndExtraHeadersReachTheReview() {
        Http proxy = new Http(server.url(), null, Http.tls(null, proxies.clientCert(), proxies.clientKey()));
        var r = proxy.send(proxy.request("/apis/projectcalico.org/v3/tiers").header("X-Remote-User", "dora")
                .header("X-Remote-Uid", "u-42").header("X-Remote-Group", "ops")
                .header("X-Remote-Extra-Acme.com%2Fproject", "p1").header("X-Remote-Extra-Acme.com%2Fproject", "p2"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(403);
        assertThat(REVIEWS).anySatisfy(review -> {
            JsonNode spec = review.path("spec");
            assertThat(spec.path("user").asText()).isEqualTo("dora");
            assertThat(spec.path("uid").asText()).isEqualTo("u-42");
            assertThat(spec.path("groups").toString()).isEqualTo("[\"ops\",\"system:authenticated\"]");
            assertThat(spec.path("extra").toString()).isEqualTo("{\"acme.com/project\":[\"p1\",\"p2\"]}");
        });
    }

    @Test
    void decisionsComeFromTheClustersReviews() {
        Http reviewed = new Http(server.url(), ApiServerFixture.ALICE_TOKEN);
        assertThat(reviewed.get("/apis/projectcalico.org/v3/globalnetworksets").statusCode()).isEqualTo(200);
        assertThat(reviewed.get("/apis/projectcalico.org/v3/globalnetworksets/x").statusCode()).isEqualTo(403);
        Http other = new Http(server.url(), "bob-token");
        assertThat(other.get("/apis/projectcalico.org/v3/globalnetworksets").statusCode()).isEqualTo(403);
        assertThat(REVIEWS).anySatisfy(r -> {
            assertThat(r.path("spec").path("user").asText()).isEqualTo("bob");
            // k8s.io/apiserver adds system:authenticated to every authenticated user.
            assertThat(r.path("spec").path("groups").toString())
                    .isEqualTo("[\"developers\",\"testers\",\"system:authenticated\"]");
            assertThat(r.path("spec").path("resourceAttributes").path("group").asText()).isEqualTo("projectcalico.org");
        });
    }
}
