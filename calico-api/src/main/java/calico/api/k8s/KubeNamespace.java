package calico.api.k8s;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** A {@code v1} Namespace; only its metadata matters to Calico. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubeNamespace(KubeObjectMeta metadata) {
    public static final String KIND = "Namespace";
}
