package calico.api.validation;

/** One validation failure: the path of the field (e.g. {@code spec.ingress[0].protocol}) and why. */
public record FieldError(String field, String reason) {
    @Override
    public String toString() {
        return field + ": " + reason;
    }
}
