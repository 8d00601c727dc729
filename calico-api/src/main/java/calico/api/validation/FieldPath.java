package calico.api.validation;

/**
 * The path of a field inside a resource as users write it in YAML, e.g.
 * {@code spec.ingress[0].destination.ports[1]}. Immutable: each step returns a new path.
 */
record FieldPath(String text) {

    static final FieldPath ROOT = new FieldPath("");

    static FieldPath of(String name) {
        return ROOT.field(name);
    }

    FieldPath field(String name) {
        return new FieldPath(text.isEmpty() ? name : text + "." + name);
    }

    FieldPath index(int i) {
        return new FieldPath(text + "[" + i + "]");
    }

    /** A map entry, e.g. {@code metadata.labels[app]}. */
    FieldPath key(String key) {
        return new FieldPath(text + "[" + key + "]");
    }

    @Override
    public String toString() {
        return text;
    }
}
