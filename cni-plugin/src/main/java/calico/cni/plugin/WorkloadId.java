package calico.cni.plugin;

import calico.api.k8s.WorkloadEndpointNames;
import calico.cni.spec.CniError;
import calico.cni.spec.CniRequest;
import java.util.HashMap;
import java.util.Map;

/**
 * Who a CNI call is for, and the names Calico derives from it.
 *
 * @param namespace  the pod's namespace (k8s), {@code default} otherwise
 * @param pod        the pod name, or null outside Kubernetes
 * @param hostVeth   {@code cali} + 11 hex of SHA-1("ns.pod") for pods (Calico's
 *                   {@code VethNameForWorkload}), {@code cali} + the first 11 characters of the
 *                   container ID otherwise (as Calico's plugin names non-Kubernetes workloads)
 * @param handleId   {@code k8s-pod-network.<container ID>}, the IPAM handle Calico's plugin uses
 */
public record WorkloadId(String orchestrator, String namespace, String pod, String containerId, String ifName,
                         String node, String endpointName, String hostVeth, String handleId) {

    public static WorkloadId of(CniRequest req, String node) {
        String containerId = req.required("CNI_CONTAINERID");
        String ifName = req.required("CNI_IFNAME");
        Map<String, String> args = cniArgs(req.optional("CNI_ARGS"));
        String ns = args.get("K8S_POD_NAMESPACE");
        String pod = args.get("K8S_POD_NAME");
        String handle = "k8s-pod-network." + containerId;
        try {
            if (ns != null && pod != null) {
                return new WorkloadId("k8s", ns, pod, containerId, ifName, node,
                        WorkloadEndpointNames.of(node, "k8s", pod, ifName),
                        WorkloadEndpointNames.interfaceName(ns, pod), handle);
            }
            return new WorkloadId("cni", "default", null, containerId, ifName, node,
                    WorkloadEndpointNames.of(node, "cni", containerId, ifName),
                    "cali" + containerId.substring(0, Math.min(11, containerId.length())), handle);
        } catch (IllegalArgumentException e) {
            throw new CniError(CniError.INVALID_ENVIRONMENT, "workload endpoint name: " + e.getMessage());
        }
    }

    public boolean kubernetes() {
        return pod != null;
    }

    /** CNI_ARGS: {@code K=V;K=V}; a malformed pair is an environment error naming CNI_ARGS. */
    static Map<String, String> cniArgs(String s) {
        Map<String, String> out = new HashMap<>();
        if (s == null) {
            return out;
        }
        for (String pair : s.split(";")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new CniError(CniError.INVALID_ENVIRONMENT, "CNI_ARGS: '" + pair + "' is not KEY=VALUE");
            }
            out.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return out;
    }
}
