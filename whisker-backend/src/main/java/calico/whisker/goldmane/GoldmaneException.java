package calico.whisker.goldmane;

import io.grpc.Status;

/** A goldmane call that failed; the API maps its status code to an HTTP status. */
public final class GoldmaneException extends RuntimeException {

    private final transient Status status;

    GoldmaneException(Status status, String target) {
        super(describe(status, target), status.getCause());
        this.status = status;
    }

    public Status.Code code() {
        return status.getCode();
    }

    /** {@return goldmane's own description, for INVALID_ARGUMENT answers that are passed on} */
    public String description() {
        return status.getDescription() == null ? status.getCode().name() : status.getDescription();
    }

    private static String describe(Status s, String target) {
        String d = s.getDescription() == null ? "" : ": " + s.getDescription();
        return switch (s.getCode()) {
            case UNAVAILABLE -> "goldmane at " + target + " is unreachable" + d;
            case DEADLINE_EXCEEDED -> "goldmane at " + target + " did not answer in time" + d;
            default -> "goldmane at " + target + " failed with " + s.getCode() + d;
        };
    }
}
