package calico.api.selector;

/** A selector that does not parse; the message gives the position and what was expected. */
public final class SelectorParseException extends IllegalArgumentException {

    private final String selector;
    private final int position;

    public SelectorParseException(String selector, int position, String expected) {
        super("invalid selector \"" + selector + "\" at position " + position + ": " + expected);
        this.selector = selector;
        this.position = position;
    }

    public String selector() {
        return selector;
    }

    /** {@return the zero-based character offset where parsing failed}. */
    public int position() {
        return position;
    }
}
