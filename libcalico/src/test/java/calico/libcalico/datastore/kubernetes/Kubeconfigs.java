package calico.libcalico.datastore.kubernetes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Test kubeconfig files (shared through libcalico's test-jar). */
public final class Kubeconfigs {

    private Kubeconfigs() {
    }

    /** Writes {@code dir/kubeconfig}: one cluster at {@code serverUrl}, a token user, that context current. */
    public static Path write(Path dir, String serverUrl) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: test
                  cluster: {server: "%s"}
                users:
                - name: calico
                  user: {token: "not-checked"}
                contexts:
                - name: test
                  context: {cluster: test, user: calico}
                current-context: test
                """.formatted(serverUrl));
    }
}
