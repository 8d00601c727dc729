package calico.libcalico.datastore.etcd;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How to reach etcd: client endpoints, optional TLS files, the deadline of every request, and
 * how often a watch asks etcd for a progress notification (a {@code Bookmark}).
 *
 * <p>TLS is on when the endpoints are {@code https} or any TLS file is set; without
 * {@code caCertFile} the JVM's trust store verifies the server. {@code certFile} and
 * {@code keyFile} (client authentication) come together or not at all; the key must be PEM
 * PKCS#8 ({@code BEGIN PRIVATE KEY}), which is what Netty reads without extra providers.
 */
public record EtcdConfig(List<URI> endpoints, Path caCertFile, Path certFile, Path keyFile,
                         Duration requestTimeout, Duration progressInterval) {

    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_PROGRESS_INTERVAL = Duration.ofSeconds(5);

    public EtcdConfig {
        Objects.requireNonNull(endpoints, "endpoints");
        endpoints = List.copyOf(endpoints);
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("ETCD_ENDPOINTS: at least one endpoint is required");
        }
        for (URI u : endpoints) {
            if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
                    || u.getHost() == null || u.getPort() < 0) {
                throw new IllegalArgumentException(
                        "ETCD_ENDPOINTS: \"" + u + "\" must be http://host:port or https://host:port");
            }
            if (!u.getScheme().equals(endpoints.get(0).getScheme())) {
                throw new IllegalArgumentException("ETCD_ENDPOINTS: mixes http and https endpoints");
            }
        }
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException(certFile == null
                    ? "ETCD_CERT_FILE: required when ETCD_KEY_FILE is set"
                    : "ETCD_KEY_FILE: required when ETCD_CERT_FILE is set");
        }
        requireReadable("ETCD_CA_CERT_FILE", caCertFile);
        requireReadable("ETCD_CERT_FILE", certFile);
        requireReadable("ETCD_KEY_FILE", keyFile);
        requestTimeout = positive("requestTimeout", requestTimeout == null ? DEFAULT_REQUEST_TIMEOUT : requestTimeout);
        progressInterval = positive("progressInterval",
                progressInterval == null ? DEFAULT_PROGRESS_INTERVAL : progressInterval);
    }

    public EtcdConfig(List<URI> endpoints, Path caCertFile, Path certFile, Path keyFile, Duration requestTimeout) {
        this(endpoints, caCertFile, certFile, keyFile, requestTimeout, null);
    }

    /** {@return a plain-text configuration for these endpoints with default timings}. */
    public static EtcdConfig of(URI... endpoints) {
        return new EtcdConfig(List.of(endpoints), null, null, null, null, null);
    }

    /**
     * Reads {@code ETCD_ENDPOINTS} (comma-separated, default {@code http://127.0.0.1:2379}),
     * {@code ETCD_CA_CERT_FILE}, {@code ETCD_CERT_FILE} and {@code ETCD_KEY_FILE}. Blank values
     * count as unset.
     *
     * @throws IllegalArgumentException naming the variable that is wrong
     */
    public static EtcdConfig fromEnvironment(Map<String, String> env) {
        String raw = blankToNull(env.get("ETCD_ENDPOINTS"));
        List<URI> endpoints = new ArrayList<>();
        for (String part : (raw == null ? "http://127.0.0.1:2379" : raw).split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            try {
                endpoints.add(URI.create(p));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("ETCD_ENDPOINTS: \"" + p + "\" is not a URI: " + e.getMessage(), e);
            }
        }
        return new EtcdConfig(endpoints, path(env, "ETCD_CA_CERT_FILE"), path(env, "ETCD_CERT_FILE"),
                path(env, "ETCD_KEY_FILE"), null, null);
    }

    /**
     * Builds a configuration from a service's own properties: {@code endpoints} comma-separated
     * {@code http(s)://host:port} URLs, blank file paths unset, default timings.
     *
     * @param what names the property in errors, e.g. {@code "typha.etcd-endpoints (ETCD_ENDPOINTS)"}
     * @throws IllegalArgumentException naming {@code what} when there is no endpoint or one is not a URL
     */
    public static EtcdConfig fromProperties(String what, String endpoints, String caCertFile, String certFile,
            String keyFile) {
        if (endpoints == null || endpoints.isBlank()) {
            throw new IllegalArgumentException(what + ": required when the datastore type is etcdv3");
        }
        List<URI> uris = Arrays.stream(endpoints.split(",")).map(String::trim).filter(e -> !e.isEmpty())
                .map(e -> endpointUri(what, e)).toList();
        return new EtcdConfig(uris, filePath(caCertFile), filePath(certFile), filePath(keyFile),
                DEFAULT_REQUEST_TIMEOUT);
    }

    private static URI endpointUri(String what, String raw) {
        URI uri;
        try {
            uri = URI.create(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + ": \"" + raw + "\" is not a URL");
        }
        if (uri.getHost() == null || uri.getPort() < 0
                || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
            throw new IllegalArgumentException(what + ": \"" + raw + "\" is not an http(s)://host:port URL");
        }
        return uri;
    }

    private static Path filePath(String s) {
        String v = blankToNull(s);
        return v == null ? null : Path.of(v);
    }

    public EtcdConfig withRequestTimeout(Duration timeout) {
        return new EtcdConfig(endpoints, caCertFile, certFile, keyFile, timeout, progressInterval);
    }

    public EtcdConfig withProgressInterval(Duration interval) {
        return new EtcdConfig(endpoints, caCertFile, certFile, keyFile, requestTimeout, interval);
    }

    public boolean tls() {
        return caCertFile != null || certFile != null || "https".equals(endpoints.get(0).getScheme());
    }

    private static Path path(Map<String, String> env, String name) {
        String v = blankToNull(env.get(name));
        return v == null ? null : Path.of(v);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private static void requireReadable(String variable, Path file) {
        if (file == null) {
            return;
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(variable + ": \"" + file + "\" does not exist or is not a file");
        }
        if (!Files.isReadable(file)) {
            throw new IllegalArgumentException(variable + ": \"" + file + "\" is not readable");
        }
    }

    private static Duration positive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": must be positive, got " + d);
        }
        return d;
    }
}
