package calico.api.k8s.policy;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * Kubernetes {@code intstr.IntOrString}: a port given as a number ({@code 80}) or a name
 * ({@code "http"}). Written back in the form it was read.
 */
public record IntOrString(Integer intValue, String stringValue) {

    public IntOrString {
        if ((intValue == null) == (stringValue == null)) {
            throw new IllegalArgumentException("exactly one of an integer or a string is required");
        }
    }

    public static IntOrString of(int value) {
        return new IntOrString(value, null);
    }

    public static IntOrString of(String value) {
        return new IntOrString(null, value);
    }

    @JsonCreator
    public static IntOrString parse(Object value) {
        if (value instanceof Integer i) {
            return of(i);
        }
        if (value instanceof String s) {
            return of(s);
        }
        throw new IllegalArgumentException("expected an integer or a string, got " + value);
    }

    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean isInt() {
        return intValue != null;
    }

    @JsonValue
    public Object toJson() {
        return intValue != null ? intValue : stringValue;
    }

    /** {@return the value as Kubernetes prints it}: the number or the name. */
    @Override
    public String toString() {
        return String.valueOf(toJson());
    }
}
