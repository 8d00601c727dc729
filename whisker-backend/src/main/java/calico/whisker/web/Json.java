package calico.whisker.web;

import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.json.JsonMapper;

/** The one mapper for what this module writes itself (filter errors, SSE events) and for parsing {@code filters}. */
public final class Json {

    /** Duplicate keys in a request are an error, not "last one wins". */
    public static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private Json() {
    }

    public static String write(Object o) {
        return MAPPER.writeValueAsString(o);
    }
}
