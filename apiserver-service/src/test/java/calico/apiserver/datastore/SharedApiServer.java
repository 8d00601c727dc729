package calico.apiserver.datastore;

import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.apiserver.e2e.ApiServerFixture;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.apiserver.ApiServerConfig;
import calico.libcalico.datastore.apiserver.ApiServerDatastore;
import calico.libcalico.datastore.memory.MemoryDatastore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real apiserver-service on the memory datastore for every test of the apiserver backend in
 * this JVM (starting Spring per test would dominate the run), serving a certificate made here so
 * that clients verify it against its CA file. {@link #newDatastore()} empties the server's store
 * first, so each test starts from an empty store as the contracts require.
 */
public final class SharedApiServer {

    private static SharedApiServer instance;

    private final ApiServerFixture fixture;
    private final Path caFile;
    private final Path tokenFile;

    private SharedApiServer(ApiServerFixture fixture, Path caFile, Path tokenFile) {
        this.fixture = fixture;
        this.caFile = caFile;
        this.tokenFile = tokenFile;
    }

    public static synchronized SharedApiServer get() {
        if (instance == null) {
            Path dir = tempDir();
            Path cert = dir.resolve("serving.crt");
            Path key = dir.resolve("serving.key");
            openssl(cert, key);
            ApiServerFixture f = ApiServerFixture.start(null, "--tls-cert-file=" + cert, "--tls-private-key-file=" + key);
            Path token = dir.resolve("admin.token");
            write(token, ApiServerFixture.ADMIN_TOKEN + "\n");
            instance = new SharedApiServer(f, cert, token);
            Runtime.getRuntime().addShutdownHook(new Thread(f::close));
        }
        return instance;
    }

    public ApiServerFixture fixture() {
        return fixture;
    }

    public Path caFile() {
        return caFile;
    }

    public Path tokenFile() {
        return tokenFile;
    }

    /** {@return the datastore the server holds} (for compaction and wiping). */
    public MemoryDatastore serverStore() {
        return (MemoryDatastore) fixture.context().getBean(Datastore.class);
    }

    public ApiServerConfig config() {
        return new ApiServerConfig(URI.create(fixture.url()), tokenFile, caFile, false, null);
    }

    /** Empties the server's store and {@return a client of it} as an admin. */
    public ApiServerDatastore newDatastore() {
        wipe();
        return new ApiServerDatastore(config());
    }

    private void wipe() {
        MemoryDatastore store = serverStore();
        for (ResourceKind kind : ResourceKind.values()) {
            List<Resource> items = store.list(kind).items();
            for (Resource r : items) {
                try {
                    store.delete(r.key(), null);
                } catch (DatastoreException.NotFound ignored) {
                    // gone meanwhile
                }
            }
        }
    }

    private static void openssl(Path cert, Path key) {
        try {
            Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", key.toString(), "-out", cert.toString(), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("openssl failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Path tempDir() {
        try {
            Path d = Files.createTempDirectory("apiserver-datastore");
            d.toFile().deleteOnExit();
            return d;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(Path p, String s) {
        try {
            Files.writeString(p, s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
