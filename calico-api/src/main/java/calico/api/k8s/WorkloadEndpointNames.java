package calico.api.k8s;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Names of workload endpoints and of their host-side interfaces, as Calico computes them.
 *
 * <p>A WorkloadEndpoint name is four dash-joined segments whose own dashes are doubled, so
 * that the name can be split back: {@code <node>-<orchestrator>-<workload>-<endpoint>}. For
 * orchestrator {@code k8s} the workload segment is the pod name, for {@code cni} the container
 * ID, and for {@code libnetwork} it repeats the orchestrator. No segment may be empty or start
 * or end with a dash (the name could not be split back).
 */
public final class WorkloadEndpointNames {

    public static final String DEFAULT_INTERFACE_PREFIX = "cali";

    private WorkloadEndpointNames() {
    }

    /** The four segments of a workload endpoint name, unescaped. */
    public record Identifiers(String node, String orchestrator, String workload, String endpoint) {
    }

    /**
     * {@return the WorkloadEndpoint name for the given identifiers}.
     *
     * @param workload the pod name (k8s), container ID (cni) or workload ID; ignored for libnetwork
     * @throws IllegalArgumentException naming the segment that is empty or starts/ends with a dash
     */
    public static String of(String node, String orchestrator, String workload, String endpoint) {
        String w = "libnetwork".equals(orchestrator) ? orchestrator : workload;
        String workloadField = switch (orchestrator == null ? "" : orchestrator) {
            case "k8s" -> "pod";
            case "cni" -> "containerID";
            default -> "workload";
        };
        return escape("node", node) + "-" + escape("orchestrator", orchestrator) + "-"
                + escape(workloadField, w) + "-" + escape("endpoint", endpoint);
    }

    /** {@return the name of the eth0 endpoint of a Kubernetes pod}: {@code <node>-k8s-<pod>-eth0}. */
    public static String forPod(String node, String pod) {
        return of(node, "k8s", pod, "eth0");
    }

    /**
     * Splits a name back into its segments: separators are single dashes, {@code --} is an
     * escaped dash.
     *
     * @throws IllegalArgumentException when the name does not have exactly four segments
     */
    public static Identifiers parse(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("workload endpoint name must not be empty");
        }
        List<String> parts = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '-' && i > 0) {
                if (i + 1 < name.length() && name.charAt(i + 1) == '-') {
                    cur.append('-');
                    i++;
                    continue;
                }
                parts.add(cur.toString());
                cur.setLength(0);
                continue;
            }
            cur.append(c);
        }
        parts.add(cur.toString());
        if (parts.size() != 4 || parts.stream().anyMatch(String::isEmpty)) {
            throw new IllegalArgumentException("\"" + name
                    + "\" is not a workload endpoint name (<node>-<orchestrator>-<workload>-<endpoint>)");
        }
        return new Identifiers(parts.get(0), parts.get(1), parts.get(2), parts.get(3));
    }

    /**
     * {@return the host-side interface name of a pod}: the prefix (Felix's first
     * {@code interfacePrefix}, {@code cali} by default) plus the first 11 hex digits of
     * SHA-1({@code "<namespace>.<pod>"}). The CNI plugin and Felix must agree on it, so it
     * never changes between releases.
     */
    public static String interfaceName(String prefix, String namespace, String pod) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1")
                    .digest((namespace + "." + pod).getBytes(StandardCharsets.UTF_8));
            return prefix + HexFormat.of().formatHex(digest).substring(0, 11);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", e);
        }
    }

    public static String interfaceName(String namespace, String pod) {
        return interfaceName(DEFAULT_INTERFACE_PREFIX, namespace, pod);
    }

    private static String escape(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(field + ": is required in a workload endpoint name");
        }
        if (value.startsWith("-")) {
            throw new IllegalArgumentException(field + ": \"" + value + "\" must not begin with '-'");
        }
        if (value.endsWith("-")) {
            throw new IllegalArgumentException(field + ": \"" + value + "\" must not end with '-'");
        }
        return value.replace("-", "--");
    }
}
