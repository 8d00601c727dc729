package calico.api.validation;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import java.util.List;

/**
 * Throughput of defaultAndValidate on typical resources (selectors only all(), so that the
 * figure measures validation, not the selector parser). Prints figures; asserts nothing.
 * Run: bench/run.sh calico-api calico.api.validation.ValidationBench
 */
public final class ValidationBench {

    private static final String POLICY = """
            apiVersion: projectcalico.org/v3
            kind: GlobalNetworkPolicy
            metadata: {name: security.web, labels: {team: net}}
            spec:
              tier: security
              order: 100
              selector: all()
              ingress:
              - {action: Allow, protocol: TCP, source: {nets: [10.0.0.0/8, 192.168.0.0/16], selector: all()},
                 destination: {ports: [80, 443, "8000:8080", http]}}
              - {action: Allow, protocol: UDP, destination: {ports: [53]}}
              - {action: Allow, protocol: ICMP, icmp: {type: 8, code: 0}}
              - {action: Deny, source: {notNets: ["fd00::/8"]}, ipVersion: 6}
              - {action: Log}
              egress:
              - {action: Allow, protocol: TCP, destination: {nets: [0.0.0.0/0], ports: [443]}}
              - {action: Allow, destination: {services: {name: kube-dns, namespace: kube-system}}}
              - {action: Pass}
            """;
    private static final String POOL = """
            apiVersion: projectcalico.org/v3
            kind: IPPool
            metadata: {name: pool}
            spec: {cidr: "fd00:10:244::/48", vxlanMode: Always, natOutgoing: true}
            """;

    private ValidationBench() {
    }

    public static void main(String[] args) {
        List<Resource> resources = List.of(ResourceCodec.get().parse(POLICY), ResourceCodec.get().parse(POOL));
        ResourceValidator v = ResourceValidator.get();
        for (Resource r : resources) {
            long sink = 0;
            for (int i = 0; i < 200_000; i++) { // warm-up
                sink += System.identityHashCode(v.defaultAndValidate(r));
            }
            int n = 1_000_000;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                sink += System.identityHashCode(v.defaultAndValidate(r));
            }
            long ns = System.nanoTime() - t0;
            System.out.printf("%-20s %8.2f us/op  %10.0f ops/s  (sink %d)%n", r.kind(), ns / 1e3 / n, n / (ns / 1e9),
                    sink & 1);
        }
    }
}
