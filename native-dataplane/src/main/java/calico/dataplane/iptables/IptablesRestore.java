package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Applies {@link RestoreTransaction}s with {@code <backend>-restore --noflush}: all tables given
 * to one {@link #apply} go through one process, each table committed atomically; rules and
 * chains not named are left alone. Reads tables back with {@link #save}.
 *
 * <p>Lock handling follows FelixConfiguration: when {@code iptablesLockTimeout} is non-zero the
 * restore gets {@code --wait <secs> --wait-interval <usecs>}; the lock file path reaches the
 * binary through {@code XTABLES_LOCKFILE}. The legacy binary then takes the lock itself and a
 * lock still busy at the timeout is reported as a retryable {@link IptablesException}. The nft
 * binary accepts the flags but needs no lock (nf_tables transactions are atomic in the kernel).
 *
 * <p>Not thread-safe: callers serialise, as felix's single dataplane thread does.
 */
public final class IptablesRestore {

    // legacy: "Error occurred at line: 4"; older tools: "line 4 failed"
    private static final Pattern FAILED_LINE = Pattern.compile("(?:line:? (\\d+) failed|Error occurred at line: (\\d+))");
    private static final int RESOURCE_PROBLEM = 4;

    private final IptablesBackend backend;
    private final XtablesLockSettings lock;
    private final List<String> commandPrefix;
    private final calico.dataplane.calls.ToolCalls calls;

    /**
     * @param commandPrefix prepended to every command; empty in production, tests pass
     *                      {@code ip netns exec <ns>} because a child process does not inherit a
     *                      Java thread's {@code setns}
     */
    public IptablesRestore(IptablesBackend backend, XtablesLockSettings lock, List<String> commandPrefix) {
        this(backend, lock, commandPrefix, calico.dataplane.calls.ToolCalls.NONE);
    }

    /** As above; {@code calls} hears every restore and save this runs. */
    public IptablesRestore(IptablesBackend backend, XtablesLockSettings lock, List<String> commandPrefix,
                           calico.dataplane.calls.ToolCalls calls) {
        this.backend = backend;
        this.lock = lock;
        this.commandPrefix = List.copyOf(commandPrefix);
        this.calls = java.util.Objects.requireNonNull(calls, "calls");
    }

    public IptablesBackend backend() {
        return backend;
    }

    public void apply(IpVersion version, RestoreTransaction... transactions) {
        apply(version, List.of(transactions));
    }

    /** Runs one restore holding every transaction; throws {@link IptablesException} on failure. */
    public void apply(IpVersion version, List<RestoreTransaction> transactions) {
        if (transactions.isEmpty()) {
            return;
        }
        StringBuilder input = new StringBuilder();
        transactions.forEach(t -> input.append(t.render()));
        List<String> cmd = new ArrayList<>(commandPrefix);
        cmd.add(backend.restoreBinary(version));
        cmd.add("--noflush");
        if (lock.waits()) {
            cmd.add("--wait");
            cmd.add(Long.toString(lock.waitSeconds()));
            cmd.add("--wait-interval");
            cmd.add(Long.toString(lock.probeIntervalMicros()));
        }
        String text = input.toString();
        ProcessRunner.Result r = ProcessRunner.run(cmd, text, lockEnv(), calls);
        Map<String, Integer> lines = new java.util.TreeMap<>();
        transactions.forEach(t -> lines.merge(t.table().kernelName(), t.lineCount(), Integer::sum));
        calls.iptablesRestore(version == IpVersion.V6 ? 6 : 4, lines, r.status() == 0);
        if (r.status() != 0) {
            throw failure(cmd, r, text);
        }
    }

    /** Reads one table with {@code <backend>-save -t <table>}. */
    public SavedTable save(IpVersion version, Table table) {
        List<String> cmd = new ArrayList<>(commandPrefix);
        cmd.addAll(List.of(backend.saveBinary(version), "-t", table.kernelName()));
        ProcessRunner.Result r = ProcessRunner.run(cmd, "", lockEnv(), calls);
        calls.iptablesSave(r.status() == 0);
        if (r.status() != 0) {
            throw new IptablesException(cmd, r.status(), r.stderr(), 0, "", false);
        }
        return SavedTable.parse(table, r.stdout());
    }

    private Map<String, String> lockEnv() {
        return Map.of("XTABLES_LOCKFILE", lock.lockFile().toString());
    }

    private IptablesException failure(List<String> cmd, ProcessRunner.Result r, String input) {
        String stderr = r.stderr();
        if (r.status() == RESOURCE_PROBLEM && stderr.contains("xtables lock")) {
            return new IptablesException(cmd, r.status(),
                    "xtables lock " + lock.lockFile() + " is held by another process (waited " + lock.waitSeconds() + "s): " + stderr,
                    0, "", true);
        }
        int n = failingLine(stderr);
        String[] lines = input.split("\n", -1);
        String line = n >= 1 && n <= lines.length ? lines[n - 1] : "";
        return new IptablesException(cmd, r.status(), stderr, line.isEmpty() ? 0 : n, line, false);
    }

    /** {@return the 1-based input line a restore's stderr blames, or 0} */
    static int failingLine(String stderr) {
        Matcher m = FAILED_LINE.matcher(stderr);
        if (!m.find()) {
            return 0;
        }
        return Integer.parseInt(m.group(1) != null ? m.group(1) : m.group(2));
    }
}
