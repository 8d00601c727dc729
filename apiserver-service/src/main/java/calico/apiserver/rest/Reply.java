package calico.apiserver.rest;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** A successful answer: HTTP code, body, and {@code Warning} header texts. */
public record Reply(int code, JsonNode body, List<String> warnings) {
    public Reply {
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
    }

    public static Reply ok(JsonNode body) {
        return new Reply(200, body, List.of());
    }
}
