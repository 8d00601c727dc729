package calico.libcalico.datastore.apiserver;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How to reach Calico's own API server ({@code apiserver-service}) as a datastore:
 * {@code CALICO_APISERVER_URL} (https://host:port), {@code CALICO_APISERVER_TOKEN_FILE} (a bearer
 * token), {@code CALICO_APISERVER_CA_FILE} (PEM trust anchors for the serving certificate),
 * required unless {@code CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY=true} (loopback development
 * only: the server is then not authenticated at all).
 *
 * @param url            the server's base URL
 * @param tokenFile      file holding the bearer token, or {@code null} for none
 * @param caFile         PEM certificates that verify the server, or {@code null} when skipping verification
 * @param insecure       skip TLS verification (no CA, no host name check)
 * @param requestTimeout deadline of every call but watch streams
 */
public record ApiServerConfig(URI url, Path tokenFile, Path caFile, boolean insecure, Duration requestTimeout) {

    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

    public ApiServerConfig {
        Objects.requireNonNull(url, "CALICO_APISERVER_URL");
        if (!"https".equals(url.getScheme()) || url.getHost() == null || url.getPort() < 0
                || (url.getPath() != null && !url.getPath().isEmpty() && !url.getPath().equals("/"))) {
            throw new IllegalArgumentException("CALICO_APISERVER_URL: \"" + url + "\" must be https://host:port");
        }
        if (caFile == null && !insecure) {
            throw new IllegalArgumentException("CALICO_APISERVER_CA_FILE: required (the PEM CA of the API server's "
                    + "certificate) unless CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY=true");
        }
        requireReadable("CALICO_APISERVER_CA_FILE", caFile);
        requireReadable("CALICO_APISERVER_TOKEN_FILE", tokenFile);
        requestTimeout = requestTimeout == null ? DEFAULT_REQUEST_TIMEOUT : requestTimeout;
        if (requestTimeout.isZero() || requestTimeout.isNegative()) {
            throw new IllegalArgumentException("requestTimeout: must be positive, got " + requestTimeout);
        }
    }

    /** Reads the {@code CALICO_APISERVER_*} variables; every error names the variable at fault. */
    public static ApiServerConfig fromEnvironment(Map<String, String> env) {
        String raw = env.getOrDefault("CALICO_APISERVER_URL", "").trim();
        if (raw.isEmpty()) {
            throw new IllegalArgumentException("CALICO_APISERVER_URL: required when DATASTORE_TYPE is apiserver");
        }
        URI url;
        try {
            url = URI.create(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("CALICO_APISERVER_URL: \"" + raw + "\" is not a URL: " + e.getMessage(), e);
        }
        String insecureRaw = env.getOrDefault("CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY", "").trim();
        boolean insecure;
        if (insecureRaw.isEmpty() || insecureRaw.equalsIgnoreCase("false")) {
            insecure = false;
        } else if (insecureRaw.equalsIgnoreCase("true")) {
            insecure = true;
        } else {
            throw new IllegalArgumentException("CALICO_APISERVER_INSECURE_SKIP_TLS_VERIFY: \"" + insecureRaw
                    + "\" is not true or false");
        }
        return new ApiServerConfig(url, path(env, "CALICO_APISERVER_TOKEN_FILE"), path(env, "CALICO_APISERVER_CA_FILE"),
                insecure, null);
    }

    private static Path path(Map<String, String> env, String name) {
        String v = env.getOrDefault(name, "").trim();
        return v.isEmpty() ? null : Path.of(v);
    }

    private static void requireReadable(String variable, Path file) {
        if (file != null && !Files.isReadable(file)) {
            throw new IllegalArgumentException(variable + ": cannot read " + file);
        }
    }
}
