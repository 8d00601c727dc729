package calico.apiserver.errors;

import calico.api.model.ResourceKind;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * A request that fails with a Kubernetes {@code Status}: the HTTP code, reason, message and
 * details that kube-apiserver gives for the same failure (factories below, one per case).
 */
public final class ApiException extends RuntimeException {

    /** One invalid field of a 422 answer, as kube-apiserver's {@code StatusCause}. */
    public record Cause(String reason, String message, String field) {
    }

    private final int code;
    private final String reason;
    private final String name;
    private final String group;
    private final String kind;
    private final List<Cause> causes;
    /** For a 410 on a continue token: the token continuing without the snapshot ({@code metadata.continue}). */
    private String continueToken;

    public ApiException(int code, String reason, String message, String name, String group, String kind,
                        List<Cause> causes) {
        super(message);
        this.code = code;
        this.reason = reason;
        this.name = name;
        this.group = group;
        this.kind = kind;
        this.causes = causes == null ? List.of() : List.copyOf(causes);
    }

    public int code() {
        return code;
    }

    public String reason() {
        return reason;
    }

    public List<Cause> causes() {
        return causes;
    }

    private static String qualified(ResourceKind kind) {
        return kind.plural() + ".projectcalico.org";
    }

    public static ApiException notFound(ResourceKind kind, String name) {
        return new ApiException(404, "NotFound", qualified(kind) + " \"" + name + "\" not found",
                name, "projectcalico.org", kind.plural(), null);
    }

    /** The path names no resource this server serves (kube-apiserver's answer for an unknown path). */
    public static ApiException noSuchPath() {
        return new ApiException(404, "NotFound", "the server could not find the requested resource",
                null, null, null, null);
    }

    public static ApiException alreadyExists(ResourceKind kind, String name) {
        return new ApiException(409, "AlreadyExists", qualified(kind) + " \"" + name + "\" already exists",
                name, "projectcalico.org", kind.plural(), null);
    }

    public static ApiException conflict(ResourceKind kind, String name) {
        return new ApiException(409, "Conflict", "Operation cannot be fulfilled on " + qualified(kind) + " \""
                + name + "\": the object has been modified; please apply your changes to the latest version and try again",
                name, "projectcalico.org", kind.plural(), null);
    }

    public static ApiException invalid(ResourceKind kind, String name, List<Cause> causes) {
        StringBuilder msg = new StringBuilder(kind.kind()).append(".projectcalico.org \"").append(name)
                .append("\" is invalid: ");
        if (causes.size() == 1) {
            msg.append(causes.get(0).field()).append(": ").append(causes.get(0).message());
        } else {
            msg.append('[');
            for (int i = 0; i < causes.size(); i++) {
                msg.append(i == 0 ? "" : ", ").append(causes.get(i).field()).append(": ").append(causes.get(i).message());
            }
            msg.append(']');
        }
        return new ApiException(422, "Invalid", msg.toString(), name, "projectcalico.org", kind.kind(), causes);
    }

    public static ApiException badRequest(String message) {
        return new ApiException(400, "BadRequest", message, null, null, null, null);
    }

    public static ApiException tooLarge(long limit) {
        return new ApiException(413, "RequestEntityTooLarge", "Request entity too large: limit is " + limit,
                null, null, null, null);
    }

    public static ApiException unauthorized() {
        return new ApiException(401, "Unauthorized", "Unauthorized", null, null, null, null);
    }

    public static ApiException forbidden(String user, String verb, String resource, String namespace, String name,
                                         String why) {
        String target = resource + ".projectcalico.org" + (name == null ? "" : " \"" + name + "\"");
        String scope = namespace == null ? "at the cluster scope" : "in the namespace \"" + namespace + "\"";
        String msg = target + " is forbidden: User \"" + user + "\" cannot " + verb + " resource \"" + resource
                + "\" in API group \"projectcalico.org\" " + scope + (why == null ? "" : ": " + why);
        return new ApiException(403, "Forbidden", msg, name, "projectcalico.org", resource, null);
    }

    public static ApiException methodNotAllowed(String method) {
        return new ApiException(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                null, null, null, null);
    }

    public static ApiException unsupportedMediaType(String type) {
        return new ApiException(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                + "accepted media types include: application/json-patch+json, application/merge-patch+json, "
                + "application/strategic-merge-patch+json, application/apply-patch+yaml", null, null, null, null);
    }

    public static ApiException gone(String message) {
        return new ApiException(410, "Expired", message, null, null, null, null);
    }

    /**
     * A continue token whose first page's revision has been compacted: 410 Expired with
     * kube-apiserver's message and, in the Status' list metadata, a token that continues the
     * list from the same key without the snapshot.
     */
    public static ApiException continueExpired(String inconsistentToken) {
        ApiException e = new ApiException(410, "Expired", "The provided continue parameter is too old to display a "
                + "consistent list result. You can start a new list without the continue parameter, or use the "
                + "continue token in this response to retrieve the remainder of the results. Continuing with the "
                + "provided token results in an inconsistent list - objects that were created, modified, or deleted "
                + "between the time the first chunk was returned and now may show up in the list.",
                null, null, null, null);
        e.continueToken = inconsistentToken;
        return e;
    }

    public static ApiException unavailable(String message) {
        return new ApiException(503, "ServiceUnavailable", message, null, null, null, null);
    }

    /**
     * An error kube-apiserver's REST layer passes on without a Status of its own (for example the
     * storage's invalid resourceVersion): the code, no reason and no details, the message as is.
     */
    public static ApiException untranslated(int code, String message) {
        return new ApiException(code, null, message, null, null, null, null);
    }

    public static ApiException internal(String message) {
        return new ApiException(500, "InternalError", "Internal error occurred: " + message, null, null, null, null);
    }

    /** {@return the {@code Status} object kube-apiserver writes for this failure}. */
    public ObjectNode toStatus() {
        ObjectNode s = JsonNodeFactory.instance.objectNode();
        s.put("kind", "Status");
        s.put("apiVersion", "v1");
        ObjectNode meta = s.putObject("metadata");
        if (continueToken != null) {
            meta.put("continue", continueToken);
        }
        s.put("status", "Failure");
        s.put("message", getMessage());
        if (reason == null) {
            s.put("code", code);
            return s;
        }
        s.put("reason", reason);
        ObjectNode details = s.putObject("details");
        if (name != null) {
            details.put("name", name);
        }
        if (group != null) {
            details.put("group", group);
        }
        if (kind != null) {
            details.put("kind", kind);
        }
        if (!causes.isEmpty()) {
            var arr = details.putArray("causes");
            for (Cause c : causes) {
                arr.addObject().put("reason", c.reason()).put("message", c.message()).put("field", c.field());
            }
        }
        s.put("code", code);
        return s;
    }
}
