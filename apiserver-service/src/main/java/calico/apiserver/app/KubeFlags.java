package calico.apiserver.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Accepts Calico's (kube-apiserver-style) command line: {@code --secure-port=5443} or
 * {@code --secure-port 5443} become the Spring property {@code --apiserver.secure-port=5443}.
 * Anything else passes through untouched (Spring's own {@code --server.port=...} still works).
 */
public final class KubeFlags {

    static final Set<String> FLAGS = Set.of("secure-port", "bind-address", "tls-cert-file", "tls-private-key-file",
            "client-ca-file", "requestheader-client-ca-file", "requestheader-allowed-names",
            "requestheader-username-headers", "requestheader-group-headers", "token-auth-file",
            "authorization-rules-file", "max-request-body-bytes", "authorization-kubeconfig", "cert-dir",
            "requestheader-uid-headers", "requestheader-extra-headers-prefix", "authentication-kubeconfig",
            "authentication-token-webhook-cache-ttl", "authentication-skip-lookup",
            "authentication-tolerate-lookup-failure", "authorization-webhook-cache-authorized-ttl",
            "authorization-webhook-cache-unauthorized-ttl");

    /** Flags that are true when given alone ({@code --authentication-skip-lookup}), as pflag's booleans. */
    static final Set<String> BOOLEANS = Set.of("authentication-skip-lookup", "authentication-tolerate-lookup-failure");

    private KubeFlags() {
    }

    public static String[] translate(String[] args) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                out.add(a);
                continue;
            }
            String body = a.substring(2);
            int eq = body.indexOf('=');
            String name = eq < 0 ? body : body.substring(0, eq);
            if (!FLAGS.contains(name)) {
                out.add(a);
                continue;
            }
            String value;
            if (eq >= 0) {
                value = body.substring(eq + 1);
            } else if (BOOLEANS.contains(name)) {
                value = "true";
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException("--" + name + ": a value is required");
            }
            out.add("--apiserver." + name + "=" + value);
        }
        return out.toArray(String[]::new);
    }
}
