package calico.api.validation;

import java.util.List;
import java.util.stream.Collectors;

/** A resource that failed validation; carries every error found, not just the first. */
public final class ValidationException extends IllegalArgumentException {

    private final String resource;
    private final List<FieldError> errors;

    public ValidationException(String resource, List<FieldError> errors) {
        super(resource + " is invalid: " + errors.stream().map(FieldError::toString).collect(Collectors.joining("; ")));
        this.resource = resource;
        this.errors = List.copyOf(errors);
    }

    /** {@return a description of the rejected resource, e.g. {@code GlobalNetworkPolicy(foo)}}. */
    public String resource() {
        return resource;
    }

    public List<FieldError> errors() {
        return errors;
    }
}
