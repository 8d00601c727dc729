package calico.charts;

import static org.assertj.core.api.Assertions.assertThat;

import calico.controlplane.ControlPlane;
import calico.libcalico.datastore.kubernetes.KubernetesConfig;
import calico.libcalico.datastore.kubernetes.KubernetesDatastore;
import calico.libcalico.ipam.AssignResult;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's RBAC judged by the real kube-apiserver: each component's account may do what its
 * service does and not what it does not ({@code kubectl auth can-i} as the account), and the CNI
 * plugin's token from the chart's Secret is enough for libcalico's IPAM to assign and release an
 * address.
 */
class ChartRbacTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds();

    private static final String NS = "calico-system";

    @BeforeAll
    static void install() {
        Helm.run("install", "calico", Helm.CHART.toString(), "--kubeconfig", KUBE.kubeconfig().toString(),
                "--namespace", NS, "--create-namespace").ok();
    }

    @ParameterizedTest(name = "{0} {1} {2} {3}: {4}")
    @CsvSource({
            "calico-node,             list,   felixconfigurations.crd.projectcalico.org, ,                 yes",
            "calico-node,             create, ippools.crd.projectcalico.org,             ,                 yes",
            "calico-node,             patch,  pods,                                      status,           yes",
            "calico-node,             update, nodes,                                     ,                 yes",
            "calico-node,             delete, pods,                                      ,                 no",
            "calico-node,             create, secrets,                                   ,                 no",
            "calico-node,             create, serviceaccounts,                           token,            no",
            "calico-cni-plugin,       create, ipamblocks.crd.projectcalico.org,          ,                 yes",
            "calico-cni-plugin,       get,    pods,                                      ,                 yes",
            "calico-cni-plugin,       list,   pods,                                      ,                 no",
            "calico-cni-plugin,       delete, ippools.crd.projectcalico.org,             ,                 no",
            "calico-cni-plugin,       list,   secrets,                                   ,                 no",
            "calico-typha,            watch,  networkpolicies.networking.k8s.io,         ,                 yes",
            "calico-typha,            watch,  tiers.crd.projectcalico.org,               ,                 yes",
            "calico-typha,            create, ippools.crd.projectcalico.org,             ,                 no",
            "calico-kube-controllers, delete, ipamhandles.crd.projectcalico.org,         ,                 yes",
            "calico-kube-controllers, update, services,                                  status,           yes",
            "calico-kube-controllers, update, services,                                  ,                 no",
            "calico-kube-controllers, delete, pods,                                      ,                 no",
            "calico-apiserver,        create, tokenreviews.authentication.k8s.io,        ,                 yes",
            "calico-apiserver,        create, subjectaccessreviews.authorization.k8s.io, ,                 yes",
            "calico-apiserver,        delete, globalnetworkpolicies.crd.projectcalico.org, ,               yes",
            "calico-apiserver,        delete, nodes,                                     ,                 no",
            "goldmane,                list,   pods,                                      ,                 no",
            "whisker,                 get,    secrets,                                   ,                 no"})
    void eachAccountMayDoWhatItsServiceDoesAndNoMore(String account, String verb, String resource, String subresource,
                                                     String expected) {
        var args = new java.util.ArrayList<>(java.util.List.of("auth", "can-i", verb, resource,
                "--as=system:serviceaccount:" + NS + ":" + account));
        if (subresource != null) {
            args.add("--subresource=" + subresource);
        }
        ControlPlane.KubectlResult r = KUBE.controlPlane().kubectlAs(KUBE.kubeconfig(), args.toArray(String[]::new));
        assertThat(answer(r)).as(String.join(" ", args) + ": " + r.output()).isEqualTo(expected);
    }

    /** kubectl's yes/no: the last line (a warning about cluster-scoped resources may come first). */
    private static String answer(ControlPlane.KubectlResult r) {
        return r.output().strip().lines().reduce((a, b) -> b).orElse("");
    }

    @Test
    void kubeControllersMayUpdateItsOwnLeaseOnly() {
        Path admin = KUBE.kubeconfig();
        String as = "--as=system:serviceaccount:" + NS + ":calico-kube-controllers";
        assertThat(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "update", "leases.coordination.k8s.io/calico-kube-controllers",
                "-n", NS, as).output().strip().lines().reduce((a, b) -> b).orElse("")).isEqualTo("yes");
        assertThat(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "update", "leases.coordination.k8s.io/other",
                "-n", NS, as).output().strip().lines().reduce((a, b) -> b).orElse("")).isEqualTo("no");
        assertThat(KUBE.controlPlane().kubectlAs(admin, "auth", "can-i", "get", "configmaps/extension-apiserver-authentication",
                "-n", "kube-system", "--as=system:serviceaccount:" + NS + ":calico-apiserver").output().strip().lines().reduce((a, b) -> b).orElse("")).isEqualTo("yes");
    }

    @Test
    void theCniTokenIsEnoughForIpam() throws Exception {
        ControlPlane cp = KUBE.controlPlane();
        cp.kubectlWithInput("""
                apiVersion: crd.projectcalico.org/v1
                kind: IPPool
                metadata: {name: rbac-pool}
                spec: {cidr: 10.77.0.0/24, blockSize: 28, ipipMode: Never, vxlanMode: Never, natOutgoing: false, nodeSelector: all()}
                """, "apply", "-f", "-");
        String token = Await.value("calico-cni-plugin-token filled", Duration.ofSeconds(60), () -> {
            String b64 = cp.kubectl("get", "secret", "calico-cni-plugin-token", "-n", NS, "-o", "jsonpath={.data.token}");
            return b64.isBlank() ? java.util.Optional.empty()
                    : java.util.Optional.of(new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8));
        });
        Config admin = KUBE.config();
        Config cni = new ConfigBuilder().withMasterUrl(admin.getMasterUrl()).withCaCertData(admin.getCaCertData())
                .withCaCertFile(admin.getCaCertFile()).withOauthToken(token).withRequestRetryBackoffLimit(1).build();
        try (KubernetesDatastore ds = new KubernetesDatastore(KubernetesConfig.of(cni))) {
            IpamClient ipam = new IpamClient(ds, IpamOptions.defaults());
            AssignResult got = ipam.autoAssign(AutoAssignRequest.ipv4("k8s-pod-network.rbac-1", "node-rbac"));
            assertThat(got.ipv4()).hasSize(1);
            assertThat(got.ipv4().get(0).toString()).startsWith("10.77.0.");
            ipam.releaseByHandle("k8s-pod-network.rbac-1");
            assertThat(ipam.addressesByHandle("k8s-pod-network.rbac-1")).isEmpty();
        }
    }
}
