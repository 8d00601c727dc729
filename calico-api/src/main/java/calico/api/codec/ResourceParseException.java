package calico.api.codec;

/**
 * Input that is not a well-formed {@code projectcalico.org/v3} resource. The message is
 * {@code "<field path>: <reason>"}, e.g. {@code "spec.ingress[0].action: unknown value \"allow\""}.
 */
public final class ResourceParseException extends RuntimeException {

    private final String field;
    private final String reason;

    public ResourceParseException(String field, String reason, Throwable cause) {
        super((field == null || field.isEmpty() ? "<document>" : field) + ": " + reason, cause);
        this.field = field == null ? "" : field;
        this.reason = reason;
    }

    public ResourceParseException(String field, String reason) {
        this(field, reason, null);
    }

    /** {@return the path of the offending field}, empty for the document as a whole. */
    public String field() {
        return field;
    }

    public String reason() {
        return reason;
    }
}
