package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.List;

/**
 * The restore input for one table: a {@code *table} header, chain declarations, rule lines
 * and {@code COMMIT}. Declarations are emitted before any rule line (restore requires a chain
 * to exist before a rule names it); rule and delete lines keep the order they were added.
 *
 * <p>Under {@code --noflush}, declaring an existing chain ({@code :chain - [0:0]}) empties it;
 * that is how a chain is flushed, and why {@link #deleteChain} declares the chain before
 * {@code -X} (a chain must be empty to be deleted). Chains not mentioned are left alone.
 */
public final class RestoreTransaction {

    /** x_tables allows 28 characters (29 bytes with the NUL). */
    public static final int MAX_CHAIN_NAME = 28;

    private final Table table;
    private final List<String> declarations = new ArrayList<>();
    private final List<String> body = new ArrayList<>();
    private final List<String> chainDeletes = new ArrayList<>();

    private RestoreTransaction(Table table) {
        this.table = table;
    }

    public static RestoreTransaction forTable(Table table) {
        return new RestoreTransaction(table);
    }

    public Table table() {
        return table;
    }

    /** Creates the chain if missing, or empties it if present. */
    public RestoreTransaction declareChain(String chain) {
        checkChain(chain);
        String line = ":" + chain + " - [0:0]";
        if (!declarations.contains(line)) {
            declarations.add(line);
        }
        return this;
    }

    /** Empties the chain (same restore line as {@link #declareChain}). */
    public RestoreTransaction flushChain(String chain) {
        return declareChain(chain);
    }

    public RestoreTransaction appendRule(String chain, Rule rule) {
        checkChain(chain);
        body.add("-A " + chain + " " + rule.render());
        return this;
    }

    /** Inserts at the top of the chain. */
    public RestoreTransaction insertRule(String chain, Rule rule) {
        checkChain(chain);
        body.add("-I " + chain + " " + rule.render());
        return this;
    }

    /** Inserts at a 1-based position. */
    public RestoreTransaction insertRule(String chain, int position, Rule rule) {
        checkChain(chain);
        checkPosition(position);
        body.add("-I " + chain + " " + position + " " + rule.render());
        return this;
    }

    /** Deletes the first rule equal to {@code rule}; fails the transaction if there is none. */
    public RestoreTransaction deleteRule(String chain, Rule rule) {
        checkChain(chain);
        body.add("-D " + chain + " " + rule.render());
        return this;
    }

    /** Deletes the rule at a 1-based position. */
    public RestoreTransaction deleteRule(String chain, int position) {
        checkChain(chain);
        checkPosition(position);
        body.add("-D " + chain + " " + position);
        return this;
    }

    /**
     * Empties and deletes the chain. Deletes come after every rule line, so rules that jumped
     * to the chain can be removed in the same transaction.
     */
    public RestoreTransaction deleteChain(String chain) {
        declareChain(chain);
        chainDeletes.add("-X " + chain);
        return this;
    }

    /** {@return how many chain and rule lines this transaction executes} (Calico's "lines executed") */
    public int lineCount() {
        return declarations.size() + body.size() + chainDeletes.size();
    }

    /** {@return the restore input, every line ending in a newline, last line {@code COMMIT}} */
    public String render() {
        StringBuilder b = new StringBuilder("*").append(table.kernelName()).append('\n');
        for (List<String> part : List.of(declarations, body, chainDeletes)) {
            for (String line : part) {
                b.append(line).append('\n');
            }
        }
        return b.append("COMMIT\n").toString();
    }

    static void checkChain(String chain) {
        if (chain == null || chain.isEmpty() || chain.length() > MAX_CHAIN_NAME) {
            throw new IllegalArgumentException("chain name: must be 1.." + MAX_CHAIN_NAME + " characters, got " + chain);
        }
        for (int i = 0; i < chain.length(); i++) {
            char c = chain.charAt(i);
            if (c <= ' ' || c == '"' || c == '\'' || c > '~') {
                throw new IllegalArgumentException("chain name: " + chain + " must be printable ASCII without spaces or quotes");
            }
        }
        if (chain.startsWith("-") || chain.startsWith("!")) {
            throw new IllegalArgumentException("chain name: " + chain + " must not start with '-' or '!'");
        }
    }

    private static void checkPosition(int position) {
        if (position < 1) {
            throw new IllegalArgumentException("rule position: must be >= 1, got " + position);
        }
    }
}
