package calico.apiserver.discovery;

import calico.api.model.ResourceKind;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The discovery documents: legacy ({@code APIGroupList}, {@code APIGroup}, {@code APIResourceList}) and aggregated (v2). */
public final class Discovery {

    public static final String GROUP = "projectcalico.org";
    public static final String VERSION = "v3";
    public static final String GROUP_VERSION = GROUP + "/" + VERSION;
    /** The media type of aggregated discovery that kubectl 1.32 asks for first. */
    public static final String AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    public static final String AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private Discovery() {
    }

    private static ObjectNode groupVersion() {
        return F.objectNode().put("groupVersion", GROUP_VERSION).put("version", VERSION);
    }

    public static ObjectNode apiGroup() {
        ObjectNode g = F.objectNode();
        g.put("name", GROUP);
        g.putArray("versions").add(groupVersion());
        g.set("preferredVersion", groupVersion());
        return g;
    }

    public static ObjectNode groupDocument() {
        ObjectNode g = apiGroup();
        ObjectNode out = F.objectNode().put("kind", "APIGroup").put("apiVersion", "v1");
        out.setAll(g);
        return out;
    }

    public static ObjectNode groupList() {
        ObjectNode out = F.objectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
        out.putArray("groups").add(apiGroup());
        return out;
    }

    public static ObjectNode resourceList() {
        ObjectNode out = F.objectNode().put("kind", "APIResourceList").put("apiVersion", "v1")
                .put("groupVersion", GROUP_VERSION);
        ArrayNode resources = out.putArray("resources");
        for (ResourceKind k : KindCatalog.kinds()) {
            ObjectNode r = resources.addObject();
            r.put("name", k.plural());
            r.put("singularName", KindCatalog.singular(k));
            r.put("namespaced", k.namespaced());
            r.put("kind", k.kind());
            strings(r.putArray("verbs"), KindCatalog.VERBS);
            if (!KindCatalog.shortNames(k).isEmpty()) {
                strings(r.putArray("shortNames"), KindCatalog.shortNames(k));
            }
            if (!KindCatalog.categories(k).isEmpty()) {
                strings(r.putArray("categories"), KindCatalog.categories(k));
            }
        }
        return out;
    }

    /** {@return the aggregated discovery list for {@code /apis}} in the given version (v2 or v2beta1). */
    public static ObjectNode aggregated(String version) {
        ObjectNode out = F.objectNode().put("kind", "APIGroupDiscoveryList")
                .put("apiVersion", "apidiscovery.k8s.io/" + version);
        out.putObject("metadata");
        ObjectNode group = out.putArray("items").addObject();
        group.putObject("metadata").put("name", GROUP);
        ObjectNode v = group.putArray("versions").addObject();
        v.put("version", VERSION);
        ArrayNode resources = v.putArray("resources");
        for (ResourceKind k : KindCatalog.kinds()) {
            ObjectNode r = resources.addObject();
            r.put("resource", k.plural());
            r.putObject("responseKind").put("group", GROUP).put("version", VERSION).put("kind", k.kind());
            r.put("scope", k.namespaced() ? "Namespaced" : "Cluster");
            r.put("singularResource", KindCatalog.singular(k));
            strings(r.putArray("verbs"), KindCatalog.VERBS);
            if (!KindCatalog.shortNames(k).isEmpty()) {
                strings(r.putArray("shortNames"), KindCatalog.shortNames(k));
            }
            if (!KindCatalog.categories(k).isEmpty()) {
                strings(r.putArray("categories"), KindCatalog.categories(k));
            }
        }
        v.put("freshness", "Current");
        return out;
    }

    /** {@code /api}: this server has no legacy core group; an empty aggregated list, as aggregated servers answer. */
    public static ObjectNode emptyAggregated(String version) {
        ObjectNode out = F.objectNode().put("kind", "APIGroupDiscoveryList")
                .put("apiVersion", "apidiscovery.k8s.io/" + version);
        out.putObject("metadata");
        out.putArray("items");
        return out;
    }

    private static void strings(ArrayNode a, Iterable<String> values) {
        values.forEach(a::add);
    }
}
