package calico.api.k8s;

import calico.api.validation.FieldError;
import java.util.List;
import java.util.stream.Collectors;

/** A Kubernetes object that cannot be converted at all; names each offending field and why. */
public final class KubernetesConversionException extends IllegalArgumentException {

    private final List<FieldError> errors;

    public KubernetesConversionException(String object, List<FieldError> errors) {
        super(object + " cannot be converted: "
                + errors.stream().map(FieldError::toString).collect(Collectors.joining("; ")));
        this.errors = List.copyOf(errors);
    }

    public KubernetesConversionException(String object, String field, String reason) {
        this(object, List.of(new FieldError(field, reason)));
    }

    public List<FieldError> errors() {
        return errors;
    }
}
