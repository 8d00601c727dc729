package calico.typha.server;

/** The delta log no longer holds what a client needs next. */
final class FellBehindException extends Exception {
    FellBehindException(String message) {
        super(message, null, false, false);
    }
}
