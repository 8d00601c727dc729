package calico.apiserver.e2e;

import calico.controlplane.ControlPlane;
import calico.controlplane.Repository;
import calico.libcalico.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * apiserver-service behind a real kube-apiserver, registered as Calico installs it: APIService
 * {@code v3.projectcalico.org} names Service {@code calico-api} in {@code calico-apiserver}, an
 * ExternalName Service for {@code localhost} (Endpoints may not hold loopback addresses; the
 * aggregator dials an ExternalName's host on the APIService's port), and its caBundle is the
 * server's own self-signed certificate ({@code --cert-dir}), valid for
 * {@code calico-api.calico-apiserver.svc}, the name the aggregator verifies. The server acts as
 * user {@value #USER} (a client certificate of the cluster CA) bound to
 * {@code system:auth-delegator} and {@code extension-apiserver-authentication-reader}, as Calico's
 * manifests bind its service account, and delegates authentication (TokenReview, the
 * authentication ConfigMap's CAs and headers: no {@code --client-ca-file} or
 * {@code --requestheader-*} flags) and authorization (SubjectAccessReview) to the cluster.
 */
public final class AggregatedApiServer implements AutoCloseable {

    public static final String USER = "calico-apiserver";

    /** The manifests ./calico up applies too: delegation RBAC, then the Service and APIService. */
    private static final Path DEPLOY = Repository.root().resolve("apiserver-service").resolve("deploy");

    private final ApiServerFixture server;

    private AggregatedApiServer(ApiServerFixture server) {
        this.server = server;
    }

    /** Starts the server with {@code datastoreArgs}, registers it and {@return it} once kube-apiserver serves its group. */
    public static AggregatedApiServer start(ControlPlane cp, String... datastoreArgs) {
        Path dir;
        try {
            dir = Files.createTempDirectory("aggregated-apiserver");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Path identity = cp.kubeconfig(USER, List.of());
        cp.kubectl("apply", "-f", DEPLOY.resolve("delegation-rbac.yaml").toString());
        List<String> args = new ArrayList<>(List.of("--cert-dir=" + dir.resolve("certs"),
                "--authentication-kubeconfig=" + identity, "--authorization-kubeconfig=" + identity));
        args.addAll(List.of(datastoreArgs));
        ApiServerFixture server = ApiServerFixture.launch(dir, args);
        try {
            cp.kubectlWithInput(registration(dir.resolve("certs/apiserver.crt"), server.port()), "apply", "-f", "-");
            cp.kubectl("wait", "--for=condition=Available", "--timeout=60s", "apiservice/v3.projectcalico.org");
            awaitDiscovery(cp);
            return new AggregatedApiServer(server);
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** {@code deploy/apiservice.yaml} (Namespace, ExternalName Service, APIService) for this server. */
    static String registration(Path caCert, int port) {
        try {
            return Files.readString(DEPLOY.resolve("apiservice.yaml"))
                    .replace("@CA_BUNDLE@", Base64.getEncoder().encodeToString(Files.readAllBytes(caCert)))
                    .replace("@PORT@", Integer.toString(port));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * kube-apiserver merges an available APIService's discovery and OpenAPI asynchronously (its
     * first OpenAPI download may meet a 503 and back off): wait until /apis names the group and
     * both OpenAPI documents describe it, or kubectl's validation, explain and apply may fail.
     */
    private static void awaitDiscovery(ControlPlane cp) {
        AtomicReference<Discovered> last = new AtomicReference<>();
        try {
            Await.until("kube-apiserver serving projectcalico.org/v3's discovery and OpenAPI", Duration.ofSeconds(90),
                    () -> {
                        last.set(Discovered.ask(cp));
                        return last.get().complete();
                    });
        } catch (AssertionError e) {
            throw new IllegalStateException(e.getMessage() + ": " + last.get().describe(), e);
        }
    }

    /** What kube-apiserver answered for the group's discovery and OpenAPI documents. */
    private record Discovered(String apis, ControlPlane.KubectlResult v3, ControlPlane.KubectlResult v2) {

        static Discovered ask(ControlPlane cp) {
            return new Discovered(cp.kubectl("get", "--raw", "/apis"),
                    cp.kubectlAs(cp.adminKubeconfig(), "get", "--raw", "/openapi/v3/apis/projectcalico.org/v3"),
                    cp.kubectlAs(cp.adminKubeconfig(), "get", "--raw", "/openapi/v2"));
        }

        boolean complete() {
            return apis.contains("\"projectcalico.org/v3\"") && v3.exitCode() == 0 && v3.output().contains(GNP_DEFINITION)
                    && v2.exitCode() == 0 && v2.output().contains(GNP_DEFINITION);
        }

        String describe() {
            return "/apis names it: " + apis.contains("projectcalico.org/v3") + "; /openapi/v3/apis/projectcalico.org/v3: "
                    + v3.output().lines().findFirst().orElse("") + "; /openapi/v2 describes it: "
                    + v2.output().contains(GNP_DEFINITION);
        }
    }

    private static final String GNP_DEFINITION = "org.projectcalico.api.v3.GlobalNetworkPolicy";

    /** The server itself, for requests that bypass kube-apiserver. */
    public ApiServerFixture server() {
        return server;
    }

    @Override
    public void close() {
        server.close();
    }
}
