package calico.felix.e2e;

import calico.api.k8s.KubeObjectMeta;
import calico.api.k8s.KubePod;
import calico.api.model.Profile;
import calico.api.model.Resource;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.controlplane.ControlPlane;
import calico.controlplane.Repository;
import calico.controlplane.Settings;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.testing.EtcdServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The datastore under {@link PolicyScaleBench}: a real etcd, or a real kube-apiserver with
 * Calico's CRDs. Both take the bench's resources as the etcd datastore holds them; the kubernetes
 * one writes a {@code kns.<ns>} Profile as the Namespace it stands for (with its default service
 * account) and a WorkloadEndpoint as the Pod it stands for, as Calico's CNI plugin leaves it on
 * that datastore (its address in the {@code cni.projectcalico.org/podIP(s)} annotations).
 */
sealed interface BenchStore extends AutoCloseable permits BenchStore.Etcd, BenchStore.Kubernetes {

    static BenchStore start(String name) {
        return switch (name) {
            case "etcd" -> Etcd.start();
            case "kubernetes" -> Kubernetes.start();
            default -> throw new IllegalArgumentException("--datastores: '" + name + "' is not etcd or kubernetes");
        };
    }

    String name();

    /** {@return felix's settings to read this datastore}. */
    List<String> felixArgs();

    /** {@return the client for Calico's resources} (closed with this store). */
    Datastore datastore();

    /** Writes one of the bench's resources the way this datastore holds it. */
    void write(Resource r);

    @Override
    void close();

    /** etcd on tmpfs; every resource as it is. */
    record Etcd(EtcdServer etcd, Datastore datastore) implements BenchStore {
        static Etcd start() {
            EtcdServer etcd = EtcdServer.startOnTmpfs();
            return new Etcd(etcd, new EtcdDatastore(EtcdConfig.of(etcd.endpoint())));
        }

        @Override
        public String name() {
            return "etcd";
        }

        @Override
        public List<String> felixArgs() {
            return FelixProcess.etcdArgs(etcd.endpoint());
        }

        @Override
        public void write(Resource r) {
            datastore.create(r);
        }

        @Override
        public void close() {
            datastore.close();
            etcd.close();
        }
    }

    /**
     * kube-apiserver (no controller manager or scheduler: pods are bound to their nodes here, and
     * the service accounts are made with their namespaces) with its etcd on tmpfs.
     */
    record Kubernetes(Path dir, Path etcdData, ControlPlane controlPlane, KubernetesClient client, Datastore datastore)
            implements BenchStore {
        static Kubernetes start() {
            try {
                Path dir = Files.createTempDirectory("bench-kube-");
                Path shm = Path.of("/dev/shm");
                Path etcdData = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "bench-kube-etcd-") : dir.resolve("etcd");
                Settings settings = Settings.in(dir).withControllerManager(false).withScheduler(false).withEtcdData(etcdData);
                ControlPlane cp = ControlPlane.start(settings);
                cp.apply(Repository.crds());
                Config config = new ConfigBuilder(Config.fromKubeconfig(cp.adminKubeconfig().toFile()))
                        .withOnlyHttpWatches(true).build();
                return new Kubernetes(dir, etcdData, cp, new KubernetesClientBuilder().withConfig(config).build(),
                        new KubernetesDatastore(KubernetesConfig.of(config)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public String name() {
            return "kubernetes";
        }

        @Override
        public List<String> felixArgs() {
            return FelixProcess.kubernetesArgs(controlPlane.adminKubeconfig());
        }

        @Override
        public void write(Resource r) {
            if (r instanceof Profile p) {
                namespace(p);
            } else if (r instanceof WorkloadEndpoint w) {
                pod(w);
            } else {
                datastore.create(r);
            }
        }

        /** {@code kns.<ns>} with labels {@code pcns.<k>: v} is Namespace {@code <ns>} labelled {@code <k>: v}. */
        private void namespace(Profile p) {
            String ns = p.metadata().name().substring("kns.".length());
            Map<String, String> labels = new LinkedHashMap<>();
            p.spec().labelsToApply().forEach((k, v) -> {
                if (k.startsWith("pcns.") && !k.equals("pcns.projectcalico.org/name")) {
                    labels.put(k.substring("pcns.".length()), v);
                }
            });
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).withLabels(labels)
                    .endMetadata().build()).create();
            client.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
                    .withName("default").withNamespace(ns).endMetadata().build()).create();
        }

        /** A WorkloadEndpoint is the Pod it stands for, as the CNI plugin leaves it (its one address a /32). */
        private void pod(WorkloadEndpoint w) {
            WorkloadEndpointSpec spec = w.spec();
            String ns = w.metadata().namespace();
            Map<String, String> labels = new LinkedHashMap<>(w.metadata().labels());
            labels.keySet().removeIf(k -> k.startsWith("projectcalico.org/"));
            String ip = spec.ipNetworks().get(0);
            List<KubePod.ContainerPort> ports = spec.ports().stream()
                    .map(port -> new KubePod.ContainerPort(port.name(), port.port(), port.protocol().toString(), 0, null))
                    .toList();
            KubePod pod = new KubePod(KubeObjectMeta.of(ns, spec.pod(), labels),
                    new KubePod.Spec(spec.node(), null, false, List.of(new KubePod.Container("main", ports)), null),
                    new KubePod.Status(ip.substring(0, ip.indexOf('/')), null, null));
            client.pods().inNamespace(ns).resource(ApiServerObjects.leftByCni(pod)).create();
        }

        @Override
        public void close() {
            datastore.close();
            client.close();
            controlPlane.close();
            delete(dir);
            delete(etcdData);
        }

        private static void delete(Path root) {
            if (!Files.exists(root)) {
                return;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                System.err.println("cannot delete " + root + ": " + e.getMessage());
            }
        }
    }
}
