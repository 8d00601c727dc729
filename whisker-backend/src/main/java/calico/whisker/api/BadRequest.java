package calico.whisker.api;

/** A 400 naming the query parameter at fault; the message starts with the parameter too. */
public final class BadRequest extends RuntimeException {

    private final String parameter;

    public BadRequest(String parameter, String reason) {
        super(parameter + ": " + reason);
        this.parameter = parameter;
    }

    public String parameter() {
        return parameter;
    }
}
