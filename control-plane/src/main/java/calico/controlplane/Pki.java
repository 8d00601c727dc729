package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The control plane's certificates and keys, made with the {@code openssl} command in one
 * directory, as kubeadm lays them out:
 * <ul>
 *   <li>{@code ca}: the cluster CA; it signs the API server's serving certificate and every
 *       client certificate the API server accepts ({@code --client-ca-file});</li>
 *   <li>{@code front-proxy-ca}: the request-header CA; it signs {@code front-proxy-client}, the
 *       certificate kube-apiserver presents to aggregated API servers, which believe the
 *       {@code X-Remote-User}/{@code X-Remote-Group} headers only from it;</li>
 *   <li>{@code sa.key}/{@code sa.pub}: the service-account token signing pair.</li>
 * </ul>
 * Files that exist are kept, so a control plane restarted on the same directory keeps its
 * identity (and its kubeconfigs stay valid). RSA 2048 keys in PKCS#8 PEM: every client here
 * (Go, the JDK, fabric8) reads them.
 */
public final class Pki {

    /** The API server's names: what in-cluster clients and loopback clients dial. */
    private static final List<String> API_SERVER_DNS = List.of("kubernetes", "kubernetes.default", "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local", "localhost");

    private final Path dir;

    private Pki(Path dir) {
        this.dir = dir;
    }

    /** A certificate and its key. */
    public record Pair(Path cert, Path key) {
    }

    /**
     * Creates (or completes) the PKI in {@code dir}; {@code serviceIp} is the first address of the
     * service range, which in-cluster clients reach the API server at.
     */
    public static Pki create(Path dir, String serviceIp) {
        Pki pki = new Pki(dir);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        pki.ca("ca", "kubernetes-ca");
        pki.ca("front-proxy-ca", "front-proxy-ca");
        List<String> sans = new ArrayList<>();
        API_SERVER_DNS.forEach(d -> sans.add("DNS:" + d));
        sans.add("IP:127.0.0.1");
        sans.add("IP:" + serviceIp);
        pki.leaf("apiserver", "ca", "kube-apiserver", List.of(), sans, "serverAuth");
        pki.client("front-proxy-client", "front-proxy-ca", "front-proxy-client", List.of());
        pki.leaf("loopback-serving", "ca", "loopback", List.of(), List.of("DNS:localhost", "IP:127.0.0.1"), "serverAuth");
        pki.serviceAccountKeys();
        return pki;
    }

    public Path dir() {
        return dir;
    }

    public Path caCert() {
        return dir.resolve("ca.crt");
    }

    public Path frontProxyCaCert() {
        return dir.resolve("front-proxy-ca.crt");
    }

    public Pair apiServer() {
        return pair("apiserver");
    }

    /** The serving pair of kube-controller-manager and kube-scheduler (127.0.0.1 and localhost). */
    public Pair loopbackServing() {
        return pair("loopback-serving");
    }

    public Pair frontProxyClient() {
        return pair("front-proxy-client");
    }

    public Path serviceAccountKey() {
        return dir.resolve("sa.key");
    }

    public Path serviceAccountPublicKey() {
        return dir.resolve("sa.pub");
    }

    /**
     * {@return a client certificate of the cluster CA} for user {@code user} in {@code groups},
     * made once per name (the file name is {@code name}).
     */
    public Pair client(String name, String user, List<String> groups) {
        return client(name, "ca", user, groups);
    }

    private Pair client(String name, String ca, String user, List<String> groups) {
        return leaf(name, ca, user, groups, List.of(), "clientAuth");
    }

    private Pair pair(String name) {
        return new Pair(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
    }

    private synchronized void ca(String name, String commonName) {
        Pair p = pair(name);
        if (Files.exists(p.cert()) && Files.exists(p.key())) {
            return;
        }
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-keyout", p.key().toString(),
                "-out", p.cert().toString(), "-subj", "/CN=" + commonName,
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature");
    }

    private synchronized Pair leaf(String name, String ca, String commonName, List<String> orgs, List<String> sans,
                                   String usage) {
        Pair p = pair(name);
        if (Files.exists(p.cert()) && Files.exists(p.key())) {
            return p;
        }
        Pair issuer = pair(ca);
        StringBuilder subject = new StringBuilder();
        orgs.forEach(o -> subject.append("/O=").append(o));
        subject.append("/CN=").append(commonName);
        Path csr = dir.resolve(name + ".csr");
        Path ext = dir.resolve(name + ".ext");
        StringBuilder extensions = new StringBuilder("basicConstraints=critical,CA:FALSE\n")
                .append("keyUsage=critical,digitalSignature,keyEncipherment\n")
                .append("extendedKeyUsage=").append(usage).append('\n');
        if (!sans.isEmpty()) {
            extensions.append("subjectAltName=").append(String.join(",", sans)).append('\n');
        }
        try {
            Files.writeString(ext, extensions, StandardCharsets.UTF_8);
            openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", p.key().toString(), "-out", csr.toString(),
                    "-subj", subject.toString());
            openssl("x509", "-req", "-in", csr.toString(), "-CA", issuer.cert().toString(), "-CAkey", issuer.key().toString(),
                    "-CAcreateserial", "-days", "3650", "-out", p.cert().toString(), "-extfile", ext.toString());
            Files.delete(csr);
            Files.delete(ext);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + name + " certificate in " + dir, e);
        }
        return p;
    }

    private synchronized void serviceAccountKeys() {
        if (Files.exists(serviceAccountKey()) && Files.exists(serviceAccountPublicKey())) {
            return;
        }
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", serviceAccountKey().toString());
        openssl("pkey", "-in", serviceAccountKey().toString(), "-pubout", "-out", serviceAccountPublicKey().toString());
    }

    private void openssl(String... args) {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed:\n" + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run openssl (Debian package openssl) to make the control plane's certificates", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted making certificates", e);
        }
    }
}
