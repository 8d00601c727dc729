package calico.apiserver.e2e;

import calico.libcalico.testing.KubeControlPlaneExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kubectl scenarios through a real kube-apiserver (v1.37.2, with its own kubectl): the
 * aggregation layer proxies projectcalico.org/v3 to the server, which authenticates the front
 * proxy by the cluster's authentication ConfigMap and authorizes by SubjectAccessReview against
 * real RBAC objects (the scenarios' rules, applied to the cluster). kube-apiserver knows the
 * scenarios' tokens from its own {@code --token-auth-file}.
 */
class KubectlAggregatedTest extends KubectlScenarios {

    static final Path TOKENS = tokenFile();

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers()
            .withApiServerFlags("--token-auth-file=" + TOKENS);

    static AggregatedApiServer aggregated;

    @BeforeAll
    static void start() {
        KUBE.controlPlane().kubectlWithInput(ApiServerFixture.RULES, "apply", "-f", "-");
        aggregated = AggregatedApiServer.start(KUBE.controlPlane(), "--apiserver.datastore-type=memory");
    }

    @AfterAll
    static void stop() throws IOException {
        if (aggregated != null) {
            aggregated.close();
        }
        Files.deleteIfExists(TOKENS);
    }

    private static Path tokenFile() {
        try {
            Path f = Files.createTempFile("kube-tokens", ".csv");
            Files.writeString(f, ApiServerFixture.TOKENS_CSV);
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    ApiServerFixture server() {
        return aggregated.server();
    }

    @Override
    Kubectl kubectl(String token) {
        return new Kubectl(KUBE.controlPlane().binaries().kubectl(), KUBE.controlPlane().apiServerUrl().toString(), token);
    }
}
