package calico.apiserver.rest;

import calico.apiserver.errors.ApiException;

/** The {@code fieldValidation} query parameter: what to do with unknown fields in a body. */
public enum FieldValidation {
    STRICT, WARN, IGNORE;

    /** kube-apiserver's default without the parameter is Warn; kubectl sends Strict. */
    public static FieldValidation parse(String value) {
        if (value == null || value.isEmpty()) {
            return WARN;
        }
        return switch (value) {
            case "Strict" -> STRICT;
            case "Warn" -> WARN;
            case "Ignore" -> IGNORE;
            default -> throw ApiException.badRequest("fieldValidation: Unsupported value: \"" + value
                    + "\": supported values: \"Ignore\", \"Strict\", \"Warn\"");
        };
    }
}
