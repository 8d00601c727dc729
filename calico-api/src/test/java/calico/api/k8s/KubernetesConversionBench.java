package calico.api.k8s;

import java.util.ArrayList;
import java.util.List;

/**
 * Throughput of the conversions on realistic objects (a controller converts every pod and
 * policy on start-up, so this bounds the resync time). Prints figures; asserts nothing.
 * Run: {@code bench/run.sh calico-api calico.api.k8s.KubernetesConversionBench}
 */
public final class KubernetesConversionBench {

    public static void main(String[] args) {
        KubernetesObjects objects = new KubernetesObjects();
        KubernetesConverter converter = new KubernetesConverter();
        KubeNetworkPolicy np = objects.parse(NetworkPolicyConversionTest.k8s("bench", """
                podSelector:
                  matchLabels: {role: db}
                  matchExpressions: [{key: tier, operator: In, values: [a, b]}]
                policyTypes: [Ingress, Egress]
                ingress:
                - from:
                  - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24]}
                  - namespaceSelector: {matchLabels: {project: p}}
                    podSelector: {matchLabels: {role: frontend}}
                  ports: [{port: 80}, {port: 81}, {port: 443}, {protocol: UDP, port: 53}, {port: http}]
                egress:
                - to: [{ipBlock: {cidr: "2001:db8::/32"}}]
                """), KubeNetworkPolicy.class);
        List<KubePod> pods = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            pods.add(new KubePod(new KubeObjectMeta("web-7d9f8-" + i, "shop", null, null, null, null, null,
                    java.util.Map.of("app", "web", "pod-template-hash", "7d9f8"), null),
                    new KubePod.Spec("worker-" + (i % 50), "api-reader", false,
                            List.of(new KubePod.Container("web", List.of(new KubePod.ContainerPort("http", 8080, "TCP", 0, null)))),
                            null),
                    new KubePod.Status("10.244." + (i / 250) + "." + (i % 250), null, "Running")));
        }

        for (int round = 0; round < 5; round++) {
            int n = 200_000;
            long t0 = System.nanoTime();
            int sink = 0;
            for (int i = 0; i < n; i++) {
                sink += converter.networkPolicy(np).value().spec().ingress().size();
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                sink += converter.workloadEndpoint(pods.get(i % pods.size())).orElseThrow().spec().ports().size();
            }
            long t2 = System.nanoTime();
            System.out.printf("round %d: NetworkPolicy %.2f us/op (%d rules), Pod->WorkloadEndpoint %.2f us/op [%d]%n",
                    round, (t1 - t0) / 1e3 / n, converter.networkPolicy(np).value().spec().ingress().size()
                            + converter.networkPolicy(np).value().spec().egress().size(),
                    (t2 - t1) / 1e3 / n, sink);
        }
    }
}
