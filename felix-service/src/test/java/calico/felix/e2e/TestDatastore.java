package calico.felix.e2e;

import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import calico.libcalico.testing.KubeControlPlaneExtension;
import java.util.List;

/**
 * The datastore under a felix end-to-end test: how felix is pointed at it, a client for Calico's
 * own resources (policies, tiers, ClusterInformation), and where the {@link Cluster}'s
 * Kubernetes objects go. The extensions are the test class's; they are read only once it runs.
 */
sealed interface TestDatastore permits TestDatastore.Etcd, TestDatastore.Kubernetes {

    /** {@return a short name for reports}. */
    String name();

    /** {@return felix's settings to read this datastore directly}. */
    List<String> felixArgs();

    /** {@return felix's settings when it reads through typha} (it opens no datastore then). */
    List<String> felixArgsThroughTypha();

    /** Empties what an earlier class left (a control plane per class starts empty). */
    void reset();

    /** {@return a new client for Calico's resources}; the caller closes it. */
    Datastore open();

    /** {@return where the cluster's Kubernetes objects go}; the {@link Cluster} closes it. */
    ClusterObjects clusterObjects();

    /**
     * {@return why Profiles cannot be written here, or null when they can}: on the kubernetes
     * datastore {@code kns.}/{@code ksa.} profiles are presented from Namespaces and
     * ServiceAccounts (read-only, as in Calico's KDD).
     */
    String profilesReadOnlyReason();

    /** A real etcd; the Kubernetes objects are converted in-process ({@link ConvertedObjects}). */
    record Etcd(EtcdServerExtension etcd) implements TestDatastore {
        @Override
        public String name() {
            return "etcd";
        }

        @Override
        public List<String> felixArgs() {
            return FelixProcess.etcdArgs(etcd.endpoint());
        }

        @Override
        public List<String> felixArgsThroughTypha() {
            // Nothing listens there: felix must not need the datastore when it reads through typha.
            return FelixProcess.etcdArgs(java.net.URI.create("http://127.0.0.1:9"));
        }

        @Override
        public void reset() {
            EtcdAdmin.wipe(etcd.endpoint());
        }

        @Override
        public Datastore open() {
            return new EtcdDatastore(EtcdConfig.of(etcd.endpoint()));
        }

        @Override
        public ClusterObjects clusterObjects() {
            return ConvertedObjects.onEtcd(etcd.endpoint());
        }

        @Override
        public String profilesReadOnlyReason() {
            return null;
        }
    }

    /**
     * A real kube-apiserver with Calico's CRDs: the Kubernetes objects are real API objects
     * ({@link ApiServerObjects}), Calico's resources custom resources written through libcalico's
     * kubernetes datastore, and felix reads all of it through that datastore
     * ({@code FELIX_DATASTORETYPE=kubernetes}, {@code KUBECONFIG}).
     */
    record Kubernetes(KubeControlPlaneExtension kube) implements TestDatastore {
        @Override
        public String name() {
            return "kubernetes";
        }

        @Override
        public List<String> felixArgs() {
            return FelixProcess.kubernetesArgs(kube.kubeconfig());
        }

        @Override
        public List<String> felixArgsThroughTypha() {
            return List.of("--FELIX_DATASTORETYPE=kubernetes");
        }

        @Override
        public void reset() {
            // one control plane per test class, started empty
        }

        @Override
        public Datastore open() {
            return kube.datastore();
        }

        @Override
        public ClusterObjects clusterObjects() {
            return new ApiServerObjects(kube.client());
        }

        @Override
        public String profilesReadOnlyReason() {
            return "on the kubernetes datastore kns.* profiles are presented from Namespaces (read-only, as in "
                    + "Calico's KDD); allowByNamespaceSelector relabels the Namespace instead";
        }
    }
}
