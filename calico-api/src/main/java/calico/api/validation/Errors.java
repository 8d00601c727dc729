package calico.api.validation;

import java.util.ArrayList;
import java.util.List;

/**
 * The errors found in one resource. Validators append to it and never stop at the first
 * problem, so that a user sees every mistake at once. One instance per validation call.
 */
final class Errors {

    private final List<FieldError> errors = new ArrayList<>();

    void add(FieldPath path, String reason) {
        errors.add(new FieldError(path.text(), reason));
    }

    boolean isEmpty() {
        return errors.isEmpty();
    }

    int size() {
        return errors.size();
    }

    List<FieldError> toList() {
        return List.copyOf(errors);
    }
}
