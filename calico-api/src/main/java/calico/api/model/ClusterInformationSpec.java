package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Spec of the {@link ClusterInformation} {@code default}: the cluster's identity and whether
 * the datastore is ready ({@code datastoreReady: false} makes components wait, e.g. during a
 * migration).
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ClusterInformationSpec(
        @JsonProperty("clusterGUID") String clusterGUID,
        String clusterType,
        String calicoVersion,
        Boolean datastoreReady,
        String variant) {
}
