package calico.ctl;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.k8s.Conversion;
import calico.api.k8s.KubeNetworkPolicy;
import calico.api.k8s.KubernetesConverter;
import calico.api.k8s.KubernetesObjects;
import calico.api.k8s.NetworkPolicyConverter;
import calico.api.model.NetworkPolicy;
import calico.api.model.Resource;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code calicoctl convert}: Kubernetes NetworkPolicies ({@code networking.k8s.io/v1}, alone or in a
 * {@code v1 List}) as the Calico v3 NetworkPolicies that enforce them, under their own names (the converter's
 * {@code knp.default.} prefix is what the kubernetes datastore shows; a converted policy is one to apply).
 * Nothing is read from or written to a datastore. A rule that cannot be converted is reported on standard
 * error and left out, as the datastore's conversion does. (Calico's convert also reads its v1 API resources;
 * ours has none to read.)
 */
final class PolicyConvert {

    private static final YAMLMapper YAML = new YAMLMapper();

    private final ResourceCodec codec;
    private final PrintStream out;
    private final PrintStream err;
    private final KubernetesObjects kube = new KubernetesObjects();
    private final KubernetesConverter converter = new KubernetesConverter();

    PolicyConvert(ResourceCodec codec, PrintStream out, PrintStream err) {
        this.codec = codec;
        this.out = out;
        this.err = err;
    }

    /** {@return the exit status}: 1 when a converted policy fails validation (unless ignored). */
    int run(String text, Command.Convert c) {
        List<Resource> converted = new ArrayList<>();
        for (JsonNode doc : documents(text)) {
            if ("List".equals(doc.path("kind").asText()) && "v1".equals(doc.path("apiVersion").asText())) {
                doc.path("items").forEach(item -> converted.add(convert(item)));
            } else {
                converted.add(convert(doc));
            }
        }
        if (!c.ignoreValidation()) {
            for (Resource r : converted) {
                try {
                    ResourceValidator.get().defaultAndValidate(r);
                } catch (ValidationException e) {
                    err.println("calicoctl: Converted manifest resource(s) failed validation: " + e.getMessage()
                            + "Re-run the command with '--ignore-validation' flag to see the converted output.");
                    return 1;
                }
            }
        }
        JsonNode tree;
        if (converted.size() == 1) {
            tree = withoutServerFields(codec.toTree(converted.get(0)));
        } else {
            ObjectNode list = codec.jsonMapper().createObjectNode();
            list.put("apiVersion", "v1");
            list.put("kind", "List");
            var items = list.putArray("items");
            converted.forEach(r -> items.add(withoutServerFields(codec.toTree(r))));
            list.putObject("metadata");
            tree = list;
        }
        if (c.output() == Command.Output.JSON) {
            out.println(codec.writePrettyJson(tree));
        } else {
            out.print(codec.writeYaml(tree));
        }
        return 0;
    }

    private Resource convert(JsonNode doc) {
        String apiVersion = doc.path("apiVersion").asText();
        String kind = doc.path("kind").asText();
        if (!KubeNetworkPolicy.API_VERSION.equals(apiVersion) || !KubeNetworkPolicy.KIND.equals(kind)) {
            throw new ResourceParseException("", "unknown resource type (" + kind + ") and/or version (" + apiVersion
                    + "): convert reads Kubernetes NetworkPolicies (" + KubeNetworkPolicy.API_VERSION + ")");
        }
        KubeNetworkPolicy np = kube.parse(doc.toString(), KubeNetworkPolicy.class);
        Conversion<NetworkPolicy> conversion = converter.networkPolicy(np);
        String where = "NetworkPolicy " + np.metadata().namespace() + "/" + np.metadata().name();
        conversion.droppedRules().forEach(e -> err.println("calicoctl: " + where + ": " + e.field() + ": " + e.reason()
                + " (the rule is left out)"));
        NetworkPolicy p = conversion.value();
        String name = NetworkPolicyConverter.kubernetesName(p.metadata().name()).orElse(p.metadata().name());
        return p.withMetadata(p.metadata().withName(name).withCreation(null, null).withResourceVersion(null));
    }

    private static List<JsonNode> documents(String text) {
        List<JsonNode> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(text)) {
            while (it.hasNext()) {
                JsonNode n = it.next();
                if (n != null && !n.isNull() && !n.isMissingNode()) {
                    docs.add(n);
                }
            }
        } catch (JsonProcessingException e) {
            throw new ResourceParseException("", "not YAML or JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ResourceParseException("", e.getMessage());
        }
        return docs;
    }

    private static JsonNode withoutServerFields(JsonNode tree) {
        if (tree.path("metadata") instanceof ObjectNode m) {
            List.of("uid", "resourceVersion", "creationTimestamp").forEach(m::remove);
        }
        return tree;
    }
}
