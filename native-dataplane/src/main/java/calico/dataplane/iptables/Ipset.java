package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Runs {@code ipset restore} transactions and reads sets back with {@code ipset save}. */
public final class Ipset {

    private static final Pattern FAILED_LINE = Pattern.compile("Error in line (\\d+)");

    private final List<String> commandPrefix;
    private final calico.dataplane.calls.ToolCalls calls;

    /** @param commandPrefix as for {@link IptablesRestore}: empty in production */
    public Ipset(List<String> commandPrefix) {
        this(commandPrefix, calico.dataplane.calls.ToolCalls.NONE);
    }

    /** As above; {@code calls} hears every ipset command this runs. */
    public Ipset(List<String> commandPrefix, calico.dataplane.calls.ToolCalls calls) {
        this.commandPrefix = List.copyOf(commandPrefix);
        this.calls = java.util.Objects.requireNonNull(calls, "calls");
    }

    /**
     * Applies the transaction; a failure names the failing line. Unlike iptables-restore this is
     * not all-or-nothing: lines before the failing one may have been applied, so after a failure
     * the caller re-reads with {@link #list()} and resyncs (a {@link IpsetTransaction#replace}).
     */
    public void restore(IpsetTransaction tx) {
        if (tx.isEmpty()) {
            return;
        }
        List<String> cmd = command("restore");
        String input = tx.render();
        ProcessRunner.Result r = run(cmd, input, (int) input.lines().count(), false);
        if (r.status() != 0) {
            Matcher m = FAILED_LINE.matcher(r.stderr());
            int n = m.find() ? Integer.parseInt(m.group(1)) : 0;
            String[] lines = input.split("\n");
            String line = n >= 1 && n <= lines.length ? lines[n - 1] : "";
            throw new IptablesException(cmd, r.status(), r.stderr(), line.isEmpty() ? 0 : n, line, false);
        }
    }

    /** {@return every set in the namespace, by name} */
    public Map<String, IpsetInfo> list() {
        return parse(run(command("save")));
    }

    /** {@return the named set, or null if it does not exist} */
    public IpsetInfo list(String name) {
        IpsetTransaction.checkName(name);
        List<String> cmd = command("save", name);
        ProcessRunner.Result r = run(cmd, "", 0, true);
        if (r.status() != 0) {
            if (r.stderr().contains("does not exist")) {
                return null;
            }
            throw new IptablesException(cmd, r.status(), r.stderr(), 0, "", false);
        }
        return parse(r.stdout()).get(name);
    }

    /** Parses {@code ipset save} output; sets of types we do not use are skipped. */
    static Map<String, IpsetInfo> parse(String save) {
        Map<String, String[]> headers = new LinkedHashMap<>();
        Map<String, List<String>> members = new HashMap<>();
        for (String line : save.split("\n")) {
            String[] w = line.strip().split("\\s+");
            if (w.length >= 3 && w[0].equals("create")) {
                headers.put(w[1], w);
                members.put(w[1], new ArrayList<>());
            } else if (w.length >= 3 && w[0].equals("add")) {
                members.computeIfAbsent(w[1], k -> new ArrayList<>()).add(w[2]);
            }
        }
        Map<String, IpsetInfo> out = new LinkedHashMap<>();
        headers.forEach((name, w) -> {
            IpsetType type;
            try {
                type = IpsetType.fromKernelName(w[2]);
            } catch (IllegalArgumentException e) {
                return;
            }
            IpsetFamily family = IpsetFamily.INET;
            for (int i = 3; i + 1 < w.length; i++) {
                if (w[i].equals("family")) {
                    family = IpsetFamily.fromKernelName(w[i + 1]);
                }
            }
            out.put(name, new IpsetInfo(name, type, family, Set.copyOf(members.get(name))));
        });
        return out;
    }

    /**
     * Runs one ipset command and reports it ({@code lines} of input); with {@code absentOk} (listing one set) "does
     * not exist" is an answer, not a failure.
     */
    private ProcessRunner.Result run(List<String> cmd, String input, int lines, boolean absentOk) {
        ProcessRunner.Result r = ProcessRunner.run(cmd, input, Map.of(), calls);
        calls.ipset(lines, r.status() == 0 || (absentOk && r.stderr().contains("does not exist")));
        return r;
    }

    private String run(List<String> cmd) {
        ProcessRunner.Result r = run(cmd, "", 0, false);
        if (r.status() != 0) {
            throw new IptablesException(cmd, r.status(), r.stderr(), 0, "", false);
        }
        return r.stdout();
    }

    private List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(commandPrefix);
        cmd.add("ipset");
        cmd.addAll(List.of(args));
        return cmd;
    }
}
