package calico.node.startup.steps;

/** Start-up cannot go on; the message says what and how to fix it. */
public final class StartupException extends RuntimeException {

    public StartupException(String message) {
        super(message);
    }
}
