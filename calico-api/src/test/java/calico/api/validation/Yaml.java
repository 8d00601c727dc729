package calico.api.validation;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import java.util.List;

/** Test helpers: build resources from compact (flow-style) YAML and collect validation errors. */
final class Yaml {

    private Yaml() {
    }

    static Resource parse(String yaml) {
        return ResourceCodec.get().parse(yaml);
    }

    static String resource(String kind, String metadata, String spec) {
        return "apiVersion: projectcalico.org/v3\nkind: " + kind + "\nmetadata: " + metadata
                + (spec == null ? "" : "\nspec: " + spec) + "\n";
    }

    static String gnp(String spec) {
        return resource("GlobalNetworkPolicy", "{name: p}", spec);
    }

    static String np(String spec) {
        return resource("NetworkPolicy", "{name: p, namespace: ns}", spec);
    }

    /** A global policy with one ingress rule. */
    static String ingress(String rule) {
        return gnp("{ingress: [" + rule + "]}");
    }

    /** A global policy with one egress rule. */
    static String egress(String rule) {
        return gnp("{egress: [" + rule + "]}");
    }

    static List<FieldError> errors(Resource r, ResourceValidator validator) {
        try {
            validator.defaultAndValidate(r);
            return List.of();
        } catch (ValidationException e) {
            return e.errors();
        }
    }

    static List<FieldError> errors(String yaml) {
        return errors(parse(yaml), ResourceValidator.get());
    }
}
