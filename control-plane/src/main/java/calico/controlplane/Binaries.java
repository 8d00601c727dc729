package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The directory holding the control plane's binaries: {@code etcd}, {@code kube-apiserver},
 * {@code kube-controller-manager}, {@code kube-scheduler} and {@code kubectl}.
 *
 * <p>{@code scripts/control-plane.sh build} writes them to
 * {@code <cache>/control-plane/<key>/bin}, where the key is the first 16 hex digits of the
 * SHA-256 of {@code control-plane/go/go.mod} followed by {@code go.sum}: the versions decide the
 * directory, so a version change is built anew and never mixed with the old binaries.
 * {@code CALICO_CONTROL_PLANE_BIN} names the directory directly.
 */
public record Binaries(Path dir) {

    public static final List<String> NAMES = List.of("etcd", "kube-apiserver", "kube-controller-manager",
            "kube-scheduler", "kubectl");

    public Path etcd() {
        return dir.resolve("etcd");
    }

    public Path kubeApiserver() {
        return dir.resolve("kube-apiserver");
    }

    public Path kubeControllerManager() {
        return dir.resolve("kube-controller-manager");
    }

    public Path kubeScheduler() {
        return dir.resolve("kube-scheduler");
    }

    public Path kubectl() {
        return dir.resolve("kubectl");
    }

    /** kubelet, built with the rest but not part of the control plane: for tests that run a real node. */
    public Path kubelet() {
        return dir.resolve("kubelet");
    }

    /** {@return these binaries} if every one is there and executable; else an error saying how to build them. */
    public Binaries requireAll() {
        List<String> missing = NAMES.stream().filter(n -> !Files.isExecutable(dir.resolve(n))).toList();
        if (!missing.isEmpty()) {
            throw new IllegalStateException("control plane binaries missing in " + dir + ": " + String.join(", ", missing)
                    + ". Build them with scripts/control-plane.sh build (needs the Go toolchain), "
                    + "or set CALICO_CONTROL_PLANE_BIN to a directory holding them.");
        }
        return this;
    }

    /** Finds the binaries of this checkout's pinned versions (see the class comment), built or not. */
    public static Binaries locate() {
        return locate(System.getenv(), Repository.root());
    }

    static Binaries locate(Map<String, String> env, Path repositoryRoot) {
        String explicit = env.get("CALICO_CONTROL_PLANE_BIN");
        if (explicit != null && !explicit.isBlank()) {
            return new Binaries(Path.of(explicit));
        }
        return new Binaries(cacheDir(env).resolve("control-plane").resolve(versionKey(repositoryRoot)).resolve("bin"));
    }

    static Path cacheDir(Map<String, String> env) {
        String own = env.get("CALICO_CACHE_DIR");
        if (own != null && !own.isBlank()) {
            return Path.of(own);
        }
        String xdg = env.get("XDG_CACHE_HOME");
        Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
        return base.resolve("calico-java");
    }

    /** The same key as {@code cat go.mod go.sum | sha256sum | cut -c1-16} in the script. */
    static String versionKey(Path repositoryRoot) {
        Path module = repositoryRoot.resolve("control-plane").resolve("go");
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(Files.readAllBytes(module.resolve("go.mod")));
            sha.update(Files.readAllBytes(module.resolve("go.sum")));
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the control plane's Go module in " + module, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
