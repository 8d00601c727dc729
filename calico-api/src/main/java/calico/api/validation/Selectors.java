package calico.api.validation;

import calico.api.selector.Selector;

/** Checks selector fields by parsing them with the selector language. */
final class Selectors {

    static final String GLOBAL = "global()";

    private Selectors() {
    }

    /** An absent or blank selector is valid (it selects everything where a selector is optional). */
    static void check(String selector, FieldPath path, Errors errors) {
        if (selector == null || selector.isBlank()) {
            return;
        }
        try {
            Selector.parse(selector);
        } catch (IllegalArgumentException e) {
            errors.add(path, e.getMessage());
        }
    }

    /** Selectors other than an entity rule's namespaceSelector must not use {@code global()}. */
    static void checkNoGlobal(String selector, FieldPath path, Errors errors) {
        if (selector != null && selector.contains(GLOBAL)) {
            errors.add(path, GLOBAL + " can only be used in a rule's namespaceSelector");
            return;
        }
        check(selector, path, errors);
    }

    /**
     * A rule's namespaceSelector may be exactly {@code global()} (match non-namespaced
     * resources, e.g. GlobalNetworkSets and host endpoints); it cannot be combined.
     */
    static void checkNamespaceSelector(String selector, FieldPath path, Errors errors) {
        if (selector == null) {
            return;
        }
        String t = selector.trim();
        if (t.equals(GLOBAL)) {
            return;
        }
        if (t.contains("global(")) {
            errors.add(path, GLOBAL + " cannot be combined with other selector expressions");
            return;
        }
        check(selector, path, errors);
    }
}
