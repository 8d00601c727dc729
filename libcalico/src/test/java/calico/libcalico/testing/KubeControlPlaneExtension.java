package calico.libcalico.testing;

import calico.api.crd.CustomResourceDefinitions;
import calico.api.model.ResourceKind;
import calico.controlplane.ControlPlane;
import calico.controlplane.Owned;
import calico.controlplane.Repository;
import calico.controlplane.Settings;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.datastore.kubernetes.TestCustomResources;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Runs one real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler; see the control-plane module) for a test class, with Calico's CRDs from
 * {@code charts/calico/crds} installed. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension();
 *
 * @Test
 * void podsBecomeEndpoints() {
 *     KUBE.client().pods()...;
 *     try (KubernetesDatastore store = KUBE.datastore()) { ... }
 * }
 * }</pre>
 *
 * <p>It also injects {@link ControlPlane} and {@link KubernetesClient} (the admin's) into test and
 * lifecycle method parameters. The control plane starts before the first test and is stopped,
 * with its directory deleted, after the last; tests share it, so each should use names (or
 * namespaces) of its own. etcd's data is on tmpfs where there is one. The certificates are
 * made once per test run and copied into each control plane's directory.
 *
 * <p>Modules that use it depend on {@code calico:control-plane} (test scope) beside this test-jar.
 */
public final class KubeControlPlaneExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace SHARED = ExtensionContext.Namespace.create(KubeControlPlaneExtension.class);

    private final boolean crds;
    private final boolean controllers;
    private final List<String> apiServerFlags;
    private Path dir;
    private Path etcdData;
    private ControlPlane controlPlane;
    private KubernetesClient client;

    public KubeControlPlaneExtension() {
        this(true, true, List.of());
    }

    private KubeControlPlaneExtension(boolean crds, boolean controllers, List<String> apiServerFlags) {
        this.crds = crds;
        this.controllers = controllers;
        this.apiServerFlags = List.copyOf(apiServerFlags);
    }

    /** Without Calico's CRDs (tests of the CRDs themselves). */
    public KubeControlPlaneExtension withoutCrds() {
        return new KubeControlPlaneExtension(false, controllers, apiServerFlags);
    }

    /** Without kube-controller-manager and kube-scheduler: faster, for tests that need neither. */
    public KubeControlPlaneExtension withoutControllers() {
        return new KubeControlPlaneExtension(crds, false, apiServerFlags);
    }

    /** With more kube-apiserver flags, e.g. {@code --watch-cache=false} (watches see etcd compactions at once). */
    public KubeControlPlaneExtension withApiServerFlags(String... flags) {
        return new KubeControlPlaneExtension(crds, controllers, List.of(flags));
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        if (controlPlane != null) {
            return;
        }
        // Owned: the next fixture removes what a killed JVM left.
        dir = Owned.directory(tmp(), "kube-test");
        copyTree(pki(context), dir.resolve("pki"));
        Path shm = Path.of("/dev/shm");
        Settings settings = Settings.in(dir).withControllerManager(controllers).withScheduler(controllers)
                .withApiServerFlags(apiServerFlags.toArray(String[]::new));
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            etcdData = Owned.directory(shm, "kube-test-etcd");
            settings = settings.withEtcdData(etcdData);
        }
        try {
            controlPlane = ControlPlane.start(settings);
            if (crds) {
                controlPlane.apply(Repository.crds());
            }
        } catch (RuntimeException e) {
            afterAll(context);
            throw e;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (client != null) {
            client.close();
            client = null;
        }
        if (controlPlane != null) {
            controlPlane.close();
            controlPlane = null;
        }
        deleteTree(etcdData);
        etcdData = null;
        deleteTree(dir);
        dir = null;
    }

    public ControlPlane controlPlane() {
        if (controlPlane == null) {
            throw new IllegalStateException("no control plane: register KubeControlPlaneExtension on a static field");
        }
        return controlPlane;
    }

    /** {@return the admin's kubeconfig} ({@code system:masters}). */
    public Path kubeconfig() {
        return controlPlane().adminKubeconfig();
    }

    /** {@return the admin's fabric8 client configuration}, HTTP watches as the kubernetes datastore uses them. */
    public Config config() {
        return new ConfigBuilder(Config.fromKubeconfig(kubeconfig().toFile())).withOnlyHttpWatches(true).build();
    }

    /** {@return a fabric8 client as the admin}, shared by the class and closed after it. */
    public synchronized KubernetesClient client() {
        if (client == null) {
            client = new KubernetesClientBuilder().withConfig(config()).build();
        }
        return client;
    }

    /** {@return a new kubernetes datastore as the admin}; the caller closes it. */
    public KubernetesDatastore datastore() {
        return new KubernetesDatastore(KubernetesConfig.of(config()));
    }

    /**
     * Deletes every Calico custom resource (every kind with a CRD, in every namespace), so that a
     * test sharing the control plane starts from an empty Calico datastore.
     */
    public void deleteCalicoResources() {
        for (ResourceKind kind : CustomResourceDefinitions.kinds()) {
            var resources = client().genericKubernetesResources(TestCustomResources.context(kind));
            var all = kind.namespaced() ? resources.inAnyNamespace() : resources;
            for (var cr : all.list().getItems()) {
                var scoped = kind.namespaced() ? resources.inNamespace(cr.getMetadata().getNamespace()) : resources;
                scoped.withName(cr.getMetadata().getName()).delete();
            }
        }
    }

    /** {@return kubectl's output} as the admin; fails with its output when it exits non-zero. */
    public String kubectl(String... args) {
        return controlPlane().kubectl(args);
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        Class<?> t = p.getParameter().getType();
        return t == ControlPlane.class || t == KubernetesClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == ControlPlane.class ? controlPlane() : client();
    }

    /**
     * The run's certificates: made by the first control plane, copied by the others (openssl
     * costs seconds), kept in the root context's store, which deletes them when the run ends.
     */
    private static Path pki(ExtensionContext context) {
        return context.getRoot().getStore(SHARED).computeIfAbsent(SharedPki.class, k -> SharedPki.create(), SharedPki.class)
                .dir();
    }

    /** Certificates shared by every control plane of a test run. */
    private record SharedPki(Path dir) implements AutoCloseable {
        static SharedPki create() {
            Path d = Owned.directory(tmp(), "kube-test-pki");
            calico.controlplane.Pki.create(d, Settings.in(d).apiServiceIp());
            return new SharedPki(d);
        }

        @Override
        public void close() {
            deleteTree(dir);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, to.resolve(f.getFileName().toString()));
            }
        }
    }

    private static Path tmp() {
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    private static void deleteTree(Path root) {
        try {
            Owned.deleteTree(root);
        } catch (UncheckedIOException e) {
            System.err.println("KubeControlPlaneExtension: " + e.getMessage());
        }
    }
}
