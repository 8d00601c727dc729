package calico.dataplane.iptables;

import java.util.List;

/**
 * An {@code iptables-restore}, {@code -save} or {@code ipset} run that failed: nothing of the
 * transaction was applied. Carries the command, exit status and stderr, and, when the tool
 * named a line, that line number (1-based, in the input we sent) and its text.
 */
public final class IptablesException extends RuntimeException {

    private final List<String> command;
    private final int status;
    private final String stderr;
    private final int lineNumber;
    private final String line;
    private final boolean retryable;

    public IptablesException(List<String> command, int status, String stderr, int lineNumber, String line, boolean retryable) {
        super(message(command, status, stderr, lineNumber, line, retryable));
        this.command = List.copyOf(command);
        this.status = status;
        this.stderr = stderr;
        this.lineNumber = lineNumber;
        this.line = line;
        this.retryable = retryable;
    }

    private static String message(List<String> command, int status, String stderr, int lineNumber, String line, boolean retryable) {
        StringBuilder b = new StringBuilder(String.join(" ", command)).append(" exited ").append(status);
        if (lineNumber > 0) {
            b.append("; failing input line ").append(lineNumber).append(": ").append(line);
            if ("COMMIT".equals(line)) {
                b.append(" (the nft backend reports errors found while committing at the COMMIT line)");
            }
        }
        if (retryable) {
            b.append(" (retryable)");
        }
        return b.append(": ").append(stderr.strip()).toString();
    }

    public List<String> command() {
        return command;
    }

    public int status() {
        return status;
    }

    public String stderr() {
        return stderr;
    }

    /** {@return the failing input line, 1-based, or 0 if the tool named none} */
    public int lineNumber() {
        return lineNumber;
    }

    /** {@return the failing input line's text, or "" if none} */
    public String line() {
        return line;
    }

    /** {@return whether trying again later may succeed} (the xtables lock was busy). */
    public boolean retryable() {
        return retryable;
    }
}
