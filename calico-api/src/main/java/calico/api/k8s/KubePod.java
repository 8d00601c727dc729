package calico.api.k8s;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** A {@code v1} Pod, reduced to what the workload-endpoint conversion reads. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubePod(KubeObjectMeta metadata, Spec spec, Status status) {

    public static final String KIND = "Pod";

    public KubePod {
        spec = spec == null ? new Spec(null, null, false, null, null) : spec;
        status = status == null ? new Status(null, null, null) : status;
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Spec(String nodeName, String serviceAccountName, boolean hostNetwork,
                       List<Container> containers, List<Container> initContainers) {
        public Spec {
            containers = containers == null ? List.of() : List.copyOf(containers);
            initContainers = initContainers == null ? List.of() : List.copyOf(initContainers);
        }
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Container(String name, List<ContainerPort> ports) {
        public Container {
            ports = ports == null ? List.of() : List.copyOf(ports);
        }
    }

    /** A container port; {@code protocol} absent means TCP, 0 means "not set" for the ports. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    public record ContainerPort(String name, int containerPort, String protocol, int hostPort,
                                @JsonProperty("hostIP") String hostIP) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Status(@JsonProperty("podIP") String podIP, @JsonProperty("podIPs") List<PodIP> podIPs,
                         String phase) {
        public Status {
            podIPs = podIPs == null ? List.of() : List.copyOf(podIPs);
        }
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PodIP(String ip) {
    }
}
