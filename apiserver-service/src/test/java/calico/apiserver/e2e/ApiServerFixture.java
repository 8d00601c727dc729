package calico.apiserver.e2e;

import calico.apiserver.app.ApiServerApplication;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A running apiserver-service on random ports with a token file (admin in system:masters,
 * alice and bob without) and an RBAC rules file: alice may manage global policies in tier
 * {@code allowed} only.
 */
public final class ApiServerFixture implements AutoCloseable {

    public static final String ADMIN_TOKEN = "admin-token";
    public static final String ALICE_TOKEN = "alice-token";

    public static final String RULES = """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata: {name: policy-editor}
            rules:
            - apiGroups: [projectcalico.org]
              resources: [globalnetworkpolicies, tier.globalnetworkpolicies]
              verbs: ["*"]
            - apiGroups: [projectcalico.org]
              resources: [tiers]
              resourceNames: [allowed]
              verbs: [get]
            ---
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRoleBinding
            metadata: {name: alice-policy-editor}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: policy-editor}
            subjects:
            - {kind: User, name: alice}
            """;

    private final ConfigurableApplicationContext context;
    private final Path dir;

    private ApiServerFixture(ConfigurableApplicationContext context, Path dir) {
        this.context = context;
        this.dir = dir;
    }

    /** kube-apiserver's token file format: admin in system:masters, alice and bob (developers, testers) without rights. */
    public static final String TOKENS_CSV = ADMIN_TOKEN + ",admin,1,\"system:masters\"\n" + ALICE_TOKEN + ",alice,2\n"
            + "bob-token,bob,3,\"developers,testers\"\n";

    /** Starts on the memory datastore, or on etcd when {@code etcdEndpoint} is given. */
    public static ApiServerFixture start(String etcdEndpoint, String... extraArgs) {
        try {
            Path dir = Files.createTempDirectory("apiserver-fixture");
            Path tokens = dir.resolve("tokens.csv");
            Files.writeString(tokens, TOKENS_CSV);
            Path rules = dir.resolve("rules.yaml");
            Files.writeString(rules, RULES);
            List<String> args = new ArrayList<>(List.of("--token-auth-file=" + tokens,
                    "--authorization-rules-file", rules.toString(),
                    "--apiserver.datastore-type=" + (etcdEndpoint == null ? "memory" : "etcdv3")));
            if (etcdEndpoint != null) {
                args.add("--apiserver.etcd-endpoints=" + etcdEndpoint);
            }
            args.addAll(List.of(extraArgs));
            return launch(dir, args);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts in this JVM on a free loopback port (and a free management port) with {@code args}; {@code dir} is the caller's. */
    public static ApiServerFixture launch(Path dir, List<String> args) {
        List<String> all = new ArrayList<>(List.of("--secure-port=0", "--bind-address=127.0.0.1", "--calico.health.port=0"));
        all.addAll(args);
        return new ApiServerFixture(ApiServerApplication.start(all.toArray(String[]::new)), dir);
    }

    public int port() {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    public String url() {
        return "https://127.0.0.1:" + port();
    }

    public int managementPort() {
        return Integer.parseInt(context.getEnvironment().getProperty("local.management.port", "0"));
    }

    public ConfigurableApplicationContext context() {
        return context;
    }

    public Path dir() {
        return dir;
    }

    /** Stops the server and deletes its directory (token and rules files, certificates). */
    @Override
    public void close() {
        context.close();
        try (var walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("ApiServerFixture: cannot delete " + dir + ": " + e.getMessage());
        }
    }
}
