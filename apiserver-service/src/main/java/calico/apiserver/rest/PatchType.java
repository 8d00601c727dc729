package calico.apiserver.rest;

import calico.apiserver.errors.ApiException;
import calico.apiserver.patch.Patches;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;

/** The PATCH media types kube-apiserver accepts for typed (non-CRD) objects. */
public enum PatchType {
    JSON("application/json-patch+json"),
    MERGE("application/merge-patch+json"),
    STRATEGIC("application/strategic-merge-patch+json"),
    APPLY("application/apply-patch+yaml");

    private final String mediaType;

    PatchType(String mediaType) {
        this.mediaType = mediaType;
    }

    public static PatchType of(String contentType) {
        String ct = contentType == null ? "" : contentType.split(";")[0].trim();
        for (PatchType t : values()) {
            if (t.mediaType.equals(ct)) {
                return t;
            }
        }
        throw ApiException.unsupportedMediaType(ct);
    }

    JsonNode parse(ObjectCodec codec, byte[] body) {
        JsonNode n;
        try {
            n = this == APPLY ? new YAMLMapper().readTree(body) : codec.json().readTree(body);
        } catch (IOException e) {
            String msg = e.getMessage() == null ? "" : e.getMessage().split("\n")[0];
            throw ApiException.badRequest(this == APPLY ? "error decoding YAML: " + msg : "invalid JSON patch: " + msg);
        }
        if (this == JSON ? !n.isArray() : !n.isObject()) {
            throw ApiException.badRequest(this == JSON
                    ? "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
                    : "the patch must be a JSON object");
        }
        return n;
    }

    JsonNode apply(JsonNode target, JsonNode patch) {
        return switch (this) {
            case JSON -> Patches.jsonPatch(target, patch);
            case MERGE -> Patches.mergePatch(target, patch);
            case STRATEGIC -> Patches.strategicMerge(target, patch);
            case APPLY -> Patches.apply(target, patch);
        };
    }
}
