package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKey;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Optional;
import java.util.function.Function;

/**
 * One Kubernetes resource type that presents (part of) a Calico kind.
 *
 * @param context   the API group, version, plural and scope to read
 * @param converter the Kubernetes object (as JSON) to the Calico resources it presents
 * @param locator   the Kubernetes object that would present a Calico key, if this source can present it
 */
record Source(ResourceDefinitionContext context, Function<JsonNode, Converted> converter,
              Function<ResourceKey, Optional<ObjectRef>> locator) {

    /** A Kubernetes object by namespace ({@code null} when cluster-scoped) and name. */
    record ObjectRef(String namespace, String name) {
    }

    /** {@return a short name for logs}, e.g. {@code pods} or {@code crd.projectcalico.org/tiers}. */
    String describe() {
        String group = context.getGroup();
        return group == null || group.isEmpty() ? context.getPlural() : group + "/" + context.getPlural();
    }
}
