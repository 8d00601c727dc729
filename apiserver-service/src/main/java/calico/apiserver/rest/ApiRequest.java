package calico.apiserver.rest;

import calico.apiserver.errors.ApiException;
import calico.api.model.ResourceKind;
import calico.apiserver.auth.User;
import java.util.Map;

/**
 * One request against a resource path, parsed: {@code kind}, {@code namespace} (null for all or
 * cluster scope), {@code name} (null for the collection), the query (first value of each
 * parameter), the body's content type and what the client accepts.
 */
public record ApiRequest(String method, ResourceKind kind, String namespace, String name,
                         Map<String, String> query, String contentType, String accept, User user, String userAgent) {

    /**
     * {@return the field manager of a write}: the {@code fieldManager} parameter, else (as
     * kube-apiserver) the User-Agent up to its first slash, printable characters only, at most 128.
     */
    public String fieldManager() {
        String m = query.get("fieldManager");
        if (m != null && !m.isEmpty()) {
            return m;
        }
        String ua = userAgent == null ? "" : userAgent.split("/", 2)[0];
        StringBuilder b = new StringBuilder();
        ua.codePoints().filter(c -> !Character.isISOControl(c)).limit(128).forEach(b::appendCodePoint);
        return b.toString();
    }


    public String param(String key) {
        return query.get(key);
    }

    public boolean flag(String key) {
        String v = query.get(key);
        return v != null && (v.isEmpty() || v.equals("true") || v.equals("1"));
    }

    public boolean dryRun() {
        String v = query.get("dryRun");
        if (v == null || v.isEmpty()) {
            return false;
        }
        if (!v.equals("All")) {
            throw ApiException.badRequest("dryRun: Unsupported value: \"" + v + "\": supported values: \"All\"");
        }
        return true;
    }

    /** {@return the Kubernetes verb} the request is authorized as. */
    public String verb() {
        return switch (method) {
            case "GET" -> name != null ? (flag("watch") ? "watch" : "get") : (flag("watch") ? "watch" : "list");
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> name != null ? "delete" : "deletecollection";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
    }
}
