package calico.api.k8s;

import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import calico.api.model.Protocol;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.model.WorkloadEndpointSpec.EndpointPort;
import calico.api.model.WorkloadEndpointSpec.IpNat;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Converts a Pod into the WorkloadEndpoint of its {@code eth0} interface.
 *
 * <p>No endpoint (empty) for pods Calico does not network: host-networked pods, pods not yet
 * scheduled to a node, and finished pods (phase Succeeded, Failed or Completed, or being
 * deleted after the CNI plugin released the IP by blanking {@code cni.projectcalico.org/podIP}),
 * whose IPs may already belong to another pod.
 */
public final class PodConverter {

    public static final String ORCHESTRATOR = "k8s";
    public static final String ENDPOINT = "eth0";

    public static final String LABEL_NAMESPACE = "projectcalico.org/namespace";
    public static final String LABEL_ORCHESTRATOR = "projectcalico.org/orchestrator";
    public static final String LABEL_SERVICE_ACCOUNT = "projectcalico.org/serviceaccount";

    public static final String ANNOTATION_POD_IP = "cni.projectcalico.org/podIP";
    public static final String ANNOTATION_POD_IPS = "cni.projectcalico.org/podIPs";
    public static final String ANNOTATION_AWS_POD_IPS = "vpc.amazonaws.com/pod-ips";
    public static final String ANNOTATION_CONTAINER_ID = "cni.projectcalico.org/containerID";
    /** JSON list of external IPs to NAT 1:1 to the pod's IP of the same family. */
    public static final String ANNOTATION_FLOATING_IPS = "cni.projectcalico.org/floatingIPs";
    /** JSON list of source CIDRs the pod may send from besides its own IPs. */
    public static final String ANNOTATION_ALLOWED_SOURCE_PREFIXES = "cni.projectcalico.org/allowedSourcePrefixes";
    /** Multus network status, copied onto the endpoint as Calico does. */
    public static final String ANNOTATION_NETWORK_STATUS = "k8s.v1.cni.cncf.io/network-status";

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() { };

    private final String interfacePrefix;

    /** @param interfacePrefix Felix's first interface prefix ({@code cali} unless configured otherwise) */
    public PodConverter(String interfacePrefix) {
        if (interfacePrefix == null || interfacePrefix.isEmpty()) {
            throw new IllegalArgumentException("interfacePrefix must not be empty");
        }
        this.interfacePrefix = interfacePrefix;
    }

    public PodConverter() {
        this(WorkloadEndpointNames.DEFAULT_INTERFACE_PREFIX);
    }

    /** {@return whether Calico networks this pod}: scheduled, not host-networked and not finished. */
    public static boolean isCalicoPod(KubePod pod) {
        String node = pod.spec().nodeName();
        return !pod.spec().hostNetwork() && node != null && !node.isEmpty() && !isFinished(pod);
    }

    /** {@return whether the pod no longer owns its IPs}. */
    public static boolean isFinished(KubePod pod) {
        Map<String, String> ann = pod.metadata() == null ? Map.of() : pod.metadata().annotations();
        if (pod.metadata() != null && pod.metadata().deletionTimestamp() != null
                && ("".equals(ann.get(ANNOTATION_POD_IP)) || "".equals(ann.get(ANNOTATION_AWS_POD_IPS)))) {
            return true;
        }
        String phase = pod.status().phase();
        return "Succeeded".equals(phase) || "Failed".equals(phase) || "Completed".equals(phase);
    }

    public Optional<WorkloadEndpoint> convert(KubePod pod) {
        KubeObjectMeta m = pod.metadata();
        String what = "Pod " + (m == null ? "<no metadata>" : m.namespace() + "/" + m.name());
        NetworkPolicyConverter.requireNamed(what, m);
        if (!isCalicoPod(pod)) {
            return Optional.empty();
        }
        KubePod.Spec spec = pod.spec();
        String ns = m.namespace();
        String sa = spec.serviceAccountName() == null ? "" : spec.serviceAccountName();

        String name;
        try {
            name = WorkloadEndpointNames.forPod(spec.nodeName(), m.name());
        } catch (IllegalArgumentException e) {
            throw new KubernetesConversionException(what, "metadata.name/spec.nodeName", e.getMessage());
        }

        List<String> profiles = new ArrayList<>();
        profiles.add(ProfileConverter.namespaceProfileName(ns));
        if (!sa.isEmpty()) {
            profiles.add(ProfileConverter.serviceAccountProfileName(ns, sa));
        }

        Map<String, String> labels = new HashMap<>(m.labels());
        labels.put(LABEL_NAMESPACE, ns);
        labels.put(LABEL_ORCHESTRATOR, ORCHESTRATOR);
        // A label value is at most 63 characters; longer names are left out, as Calico does.
        if (!sa.isEmpty() && sa.length() < 63) {
            labels.put(LABEL_SERVICE_ACCOUNT, sa);
        }

        Map<String, String> annotations = new HashMap<>();
        String networkStatus = m.annotations().get(ANNOTATION_NETWORK_STATUS);
        if (networkStatus != null) {
            annotations.put(ANNOTATION_NETWORK_STATUS, networkStatus);
        }

        ObjectMeta meta = new ObjectMeta(name, ns, emptyToNull(m.generateName()), emptyToNull(m.uid()),
                emptyToNull(m.resourceVersion()), null, emptyToNull(m.creationTimestamp()), null, labels,
                annotations, null, null);
        String containerId = emptyToNull(m.annotations().get(ANNOTATION_CONTAINER_ID));
        List<Cidr> ips = ipNetworks(what, pod);
        WorkloadEndpointSpec wep = new WorkloadEndpointSpec(ORCHESTRATOR, null, spec.nodeName(), containerId,
                m.name(), ENDPOINT, emptyToNull(sa), ips.stream().map(Cidr::toString).toList(),
                floatingIps(what, m.annotations(), ips), null, null, profiles,
                WorkloadEndpointNames.interfaceName(interfacePrefix, ns, m.name()), null, ports(spec),
                allowedSourcePrefixes(what, m.annotations()));
        return Optional.of(new WorkloadEndpoint(meta, wep));
    }

    /**
     * The pod's IPs as /32 or /128 networks, from the first source that has any: status.podIPs,
     * status.podIP, then the Calico CNI annotations (plural, then singular), then AWS VPC CNI's.
     * The annotations let the endpoint appear before the kubelet reports the pod's status.
     */
    private static List<Cidr> ipNetworks(String what, KubePod pod) {
        KubePod.Status st = pod.status();
        Map<String, String> ann = pod.metadata().annotations();
        List<String> raw;
        String field;
        if (!st.podIPs().isEmpty()) {
            raw = st.podIPs().stream().map(KubePod.PodIP::ip).toList();
            field = "status.podIPs";
        } else if (notEmpty(st.podIP())) {
            raw = List.of(st.podIP());
            field = "status.podIP";
        } else if (notEmpty(ann.get(ANNOTATION_POD_IPS))) {
            raw = Arrays.asList(ann.get(ANNOTATION_POD_IPS).split(","));
            field = "metadata.annotations[" + ANNOTATION_POD_IPS + "]";
        } else if (notEmpty(ann.get(ANNOTATION_POD_IP))) {
            raw = List.of(ann.get(ANNOTATION_POD_IP));
            field = "metadata.annotations[" + ANNOTATION_POD_IP + "]";
        } else if (notEmpty(ann.get(ANNOTATION_AWS_POD_IPS))) {
            raw = Arrays.asList(ann.get(ANNOTATION_AWS_POD_IPS).split(","));
            field = "metadata.annotations[" + ANNOTATION_AWS_POD_IPS + "]";
        } else {
            return List.of();
        }
        List<Cidr> out = new ArrayList<>(raw.size());
        for (String ip : raw) {
            try {
                out.add(Cidr.parseCidrOrIp(ip.trim()));
            } catch (IllegalArgumentException e) {
                throw new KubernetesConversionException(what, field, e.getMessage());
            }
        }
        return out;
    }

    /**
     * 1:1 NATs from the floatingIPs annotation: each external IP maps to the pod IP of its
     * family (IPv6 if it contains a colon); none while the pod has no IP. A pod IP that is not a
     * single address (/32, /128) cannot be a NAT target and is an error, as in Calico.
     */
    private static List<IpNat> floatingIps(String what, Map<String, String> ann, List<Cidr> ips) {
        String field = "metadata.annotations[" + ANNOTATION_FLOATING_IPS + "]";
        String value = ann.get(ANNOTATION_FLOATING_IPS);
        if (value == null || ips.isEmpty()) {
            return List.of();
        }
        List<String> external = jsonStrings(what, field, value);
        String v4 = null;
        String v6 = null;
        for (Cidr ip : ips) {
            if (!ip.isSingleAddress()) {
                throw new KubernetesConversionException(what, field, "pod IP " + ip + " is not a single address");
            }
            if (ip.version() == 4) {
                v4 = ip.address().toString();
            } else {
                v6 = ip.address().toString();
            }
        }
        List<IpNat> out = new ArrayList<>();
        for (String ext : external) {
            String internal = ext.contains(":") ? v6 : v4;
            if (internal != null) {
                out.add(new IpNat(internal, ext));
            }
        }
        return out;
    }

    /** The allowedSourcePrefixes annotation as normalised CIDRs (host bits cleared). */
    private static List<String> allowedSourcePrefixes(String what, Map<String, String> ann) {
        String field = "metadata.annotations[" + ANNOTATION_ALLOWED_SOURCE_PREFIXES + "]";
        String value = ann.get(ANNOTATION_ALLOWED_SOURCE_PREFIXES);
        if (value == null || value.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String prefix : jsonStrings(what, field, value)) {
            try {
                out.add(Cidr.parse(prefix).network().toString());
            } catch (IllegalArgumentException e) {
                throw new KubernetesConversionException(what, field, e.getMessage());
            }
        }
        return out;
    }

    private static List<String> jsonStrings(String what, String field, String value) {
        try {
            List<String> list = JSON.readValue(value, STRINGS);
            if (list == null || list.contains(null)) {
                throw new KubernetesConversionException(what, field, "must be a JSON list of strings");
            }
            return list;
        } catch (JsonProcessingException e) {
            throw new KubernetesConversionException(what, field, "is not a JSON list of strings: " + e.getOriginalMessage());
        }
    }

    /**
     * Container ports that matter to policy: named ports (for named-port rules) and host
     * ports. Protocol absent means TCP; ports with other protocols are skipped, as in Calico.
     */
    private static List<EndpointPort> ports(KubePod.Spec spec) {
        List<EndpointPort> out = new ArrayList<>();
        List<KubePod.Container> all = new ArrayList<>(spec.containers());
        all.addAll(spec.initContainers());
        for (KubePod.Container c : all) {
            for (KubePod.ContainerPort p : c.ports()) {
                boolean named = p.name() != null && !p.name().isEmpty();
                if (p.containerPort() == 0 || (p.hostPort() == 0 && !named)) {
                    continue;
                }
                Protocol protocol = switch (p.protocol() == null ? "" : p.protocol()) {
                    case "", "TCP" -> Protocol.TCP;
                    case "UDP" -> Protocol.UDP;
                    case "SCTP" -> Protocol.SCTP;
                    default -> null;
                };
                if (protocol == null) {
                    continue;
                }
                out.add(new EndpointPort(named ? p.name() : null, protocol, p.containerPort(),
                        p.hostPort() == 0 ? null : p.hostPort(), emptyToNull(p.hostIP())));
            }
        }
        return out;
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
