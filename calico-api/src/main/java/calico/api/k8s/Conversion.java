package calico.api.k8s;

import calico.api.validation.FieldError;
import java.util.List;

/**
 * A converted resource plus the Kubernetes rules that could not be converted and were left
 * out. Dropping an allow rule only ever allows less, so a partly converted policy still fails
 * closed; callers log {@link #droppedRules()} (Calico reports them the same way).
 *
 * @param value        the converted resource
 * @param droppedRules one entry per Kubernetes rule left out, naming the field and the reason
 */
public record Conversion<T>(T value, List<FieldError> droppedRules) {

    public Conversion {
        droppedRules = List.copyOf(droppedRules);
    }

    public boolean isComplete() {
        return droppedRules.isEmpty();
    }

    /** {@return the value}, or throws when any rule was dropped (for callers that want all or nothing). */
    public T orElseThrow(String object) {
        if (!droppedRules.isEmpty()) {
            throw new KubernetesConversionException(object, droppedRules);
        }
        return value;
    }
}
