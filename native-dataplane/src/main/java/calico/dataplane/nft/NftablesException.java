package calico.dataplane.nft;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * libnftables refused a batch (or a list). Nothing of a refused batch was applied. Carries the
 * library's error text, the whole document sent, and — when it could be pinned down — the first
 * command the kernel or parser rejected, so an operator sees exactly what failed.
 */
public final class NftablesException extends RuntimeException {

    private static final int MAX_SHOWN = 2000;

    private final String errorText;
    private final String document;
    private final int failedIndex;
    private final transient JsonNode failedCommand;

    NftablesException(String errorText, String document, int failedIndex, JsonNode failedCommand) {
        super(message(errorText, document, failedIndex, failedCommand));
        this.errorText = errorText;
        this.document = document;
        this.failedIndex = failedIndex;
        this.failedCommand = failedCommand;
    }

    private static String message(String errorText, String document, int index, JsonNode command) {
        String error = errorText.isBlank() ? "(libnftables gave no error text)" : errorText.strip();
        if (command != null) {
            return "nftables rejected command #" + index + " " + abbreviate(command.toString()) + ": " + error;
        }
        return "nftables rejected " + abbreviate(document) + ": " + error;
    }

    // A set command can carry thousands of elements: keep log lines readable; the accessors keep it all.
    private static String abbreviate(String json) {
        return json.length() <= MAX_SHOWN ? json : json.substring(0, MAX_SHOWN) + "...(" + json.length() + " chars)";
    }

    /** {@return the text libnftables wrote to its error buffer} */
    public String errorText() {
        return errorText;
    }

    /** {@return the whole JSON document that was sent} */
    public String document() {
        return document;
    }

    /** {@return the 0-based index of the first rejected command in the batch, or -1 if unknown} */
    public int failedIndex() {
        return failedIndex;
    }

    /** {@return the first rejected command, when it could be identified} */
    public Optional<JsonNode> failedCommand() {
        return Optional.ofNullable(failedCommand);
    }
}
