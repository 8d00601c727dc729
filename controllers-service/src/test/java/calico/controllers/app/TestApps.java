package calico.controllers.app;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** Starts the whole application for a test, as a replica named {@code identity}, on free ports. */
final class TestApps {

    private TestApps() {
    }

    /** On the kubernetes datastore of {@code kubeconfig}'s cluster; the Lease in namespace {@code default}. */
    static ConfigurableApplicationContext kubernetes(Path kubeconfig, String identity, String... extra) {
        List<String> args = new ArrayList<>(List.of("--DATASTORE_TYPE=kubernetes", "--KUBECONFIG=" + kubeconfig));
        args.addAll(List.of(extra));
        return start(identity, args);
    }

    static ConfigurableApplicationContext start(String identity, List<String> extra) {
        List<String> args = new ArrayList<>(List.of("--KUBE_CONTROLLERS_HEALTHPORT=" + freePort(),
                "--KUBE_CONTROLLERS_ADMINPORT=0", "--POD_NAME=" + identity, "--POD_NAMESPACE=default"));
        args.addAll(extra);
        return new SpringApplicationBuilder(ControllersApplication.class).run(args.toArray(String[]::new));
    }

    /** {@return how many cluster-wide LISTs of {@code resource} the API server has answered} (its own metrics). */
    static long clusterLists(calico.libcalico.testing.KubeControlPlaneExtension kube, String resource) {
        return kube.kubectl("get", "--raw", "/metrics").lines()
                .filter(l -> l.startsWith("apiserver_request_total{") && l.contains("resource=\"" + resource + "\"")
                        && l.contains("scope=\"cluster\"") && l.contains("verb=\"LIST\""))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
