package calico.api.k8s;

/** An invalid sub-field found deep in a conversion; the caller prefixes its own path. */
final class FieldProblem extends IllegalArgumentException {

    private final String field;
    private final String reason;

    FieldProblem(String field, String reason) {
        super(field + ": " + reason);
        this.field = field;
        this.reason = reason;
    }

    String field() {
        return field;
    }

    String reason() {
        return reason;
    }

    /** {@return this problem with its field placed under {@code parent}}. */
    FieldProblem under(String parent) {
        return new FieldProblem(field.isEmpty() ? parent : parent + "." + field, reason);
    }
}
