package calico.goldmane.query;

/** A malformed request: the message names the field and says what is wrong (INVALID_ARGUMENT). */
public final class InvalidRequest extends RuntimeException {

    public InvalidRequest(String field, String reason) {
        super(field + ": " + reason);
    }
}
