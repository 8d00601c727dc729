package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKey;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * One Kubernetes resource type that presents (part of) a Calico kind.
 *
 * @param context   the API group, version, plural and scope to read
 * @param converter the Kubernetes object (as JSON) to the Calico resources it presents
 * @param locator   the Kubernetes object that would present a Calico key, if this source can present it
 * @param keys      the keys an object presents when it converts, read from its names alone (never fails):
 *                  what a watch reports deleted when the object stops converting
 */
record Source(ResourceDefinitionContext context, Function<JsonNode, Converted> converter,
              Function<ResourceKey, Optional<ObjectRef>> locator, Function<JsonNode, List<ResourceKey>> keys) {

    /** A Kubernetes object by namespace ({@code null} when cluster-scoped) and name. */
    record ObjectRef(String namespace, String name) {

        static ObjectRef of(JsonNode obj) {
            String ns = obj.path("metadata").path("namespace").asText("");
            return new ObjectRef(ns.isEmpty() ? null : ns, obj.path("metadata").path("name").asText(""));
        }

        @Override
        public String toString() {
            return namespace == null ? name : namespace + "/" + name;
        }
    }

    /** {@return a short name for logs}, e.g. {@code pods} or {@code crd.projectcalico.org/tiers}. */
    String describe() {
        String group = context.getGroup();
        return group == null || group.isEmpty() ? context.getPlural() : group + "/" + context.getPlural();
    }

    /** {@return one object of this source for logs}, e.g. {@code pods prod/web-1}. */
    String describe(JsonNode obj) {
        return describe() + " " + ObjectRef.of(obj);
    }

    /** {@return whether the objects are Calico's own custom resources} (validated as Calico validates writes). */
    boolean customResource() {
        return CrdCodec.GROUP.equals(context.getGroup());
    }
}
