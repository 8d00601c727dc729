package calico.ctl;

import calico.api.net.IpAddress;
import calico.libcalico.ipam.IpamCheckReport;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamUsage;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/** {@code calicoctl ipam show|release|check}, printed the way Calico's calicoctl prints them. */
final class IpamCommands {

    private static final List<String> HEADER = List.of("GROUPING", "CIDR", "IPS TOTAL", "IPS IN USE", "IPS FREE");

    private final IpamClient ipam;
    private final PrintStream out;
    private final PrintStream err;

    IpamCommands(IpamClient ipam, PrintStream out, PrintStream err) {
        this.ipam = ipam;
        this.out = out;
        this.err = err;
    }

    /** {@return the exit status}: 1 when {@code release} names an address that is not allocated. */
    int run(Command command) {
        if (command instanceof Command.IpamShow s) {
            show(s.showBlocks());
            return 0;
        }
        if (command instanceof Command.IpamRelease r) {
            return release(r.ip());
        }
        if (command instanceof Command.IpamCheck) {
            check();
            return 0;
        }
        throw new IllegalStateException("not an ipam command: " + command);
    }

    private void show(boolean showBlocks) {
        IpamUsage usage = ipam.usage();
        List<List<String>> rows = new ArrayList<>();
        for (IpamUsage.PoolUsage p : usage.pools()) {
            rows.add(row("IP Pool", p.cidr().toString(), p.size(), BigInteger.valueOf(p.inUse())));
            if (showBlocks) {
                for (IpamUsage.BlockUsage b : p.blocks()) {
                    rows.add(row("Block", b.cidr().toString(), BigInteger.valueOf(b.size()), BigInteger.valueOf(b.inUse())));
                }
            }
        }
        if (showBlocks) {
            for (IpamUsage.BlockUsage b : usage.orphanBlocks()) {
                rows.add(row("Block", b.cidr() + " (no pool)", BigInteger.valueOf(b.size()), BigInteger.valueOf(b.inUse())));
            }
        }
        printTable(rows);
    }

    private int release(String text) {
        IpAddress ip;
        try {
            ip = IpAddress.parse(text);
        } catch (IllegalArgumentException e) {
            err.println("calicoctl: --ip: " + e.getMessage());
            return 1;
        }
        if (!ipam.releaseIps(List.of(ip)).isEmpty()) {
            err.println("calicoctl: IP address " + ip + " is not assigned");
            return 1;
        }
        out.println("Successfully released IP address " + ip);
        return 0;
    }

    private void check() {
        out.println("Checking IPAM for inconsistencies...");
        out.println();
        IpamCheckReport r = ipam.check();
        out.println("Found " + r.blocks() + " IPAM blocks.");
        out.println("Found " + r.handles() + " IPAM handles.");
        out.println("Found " + r.allocations() + " in-use IPs.");
        r.problems().forEach(p -> out.println("  " + p));
        out.println("Check complete; found " + r.problems().size() + " problems.");
    }

    private static List<String> row(String grouping, String cidr, BigInteger total, BigInteger inUse) {
        BigInteger free = total.subtract(inUse);
        return List.of(grouping, cidr, total.toString(), inUse + " (" + percent(inUse, total) + ")",
                free + " (" + percent(free, total) + ")");
    }

    private static String percent(BigInteger part, BigInteger total) {
        if (total.signum() == 0) {
            return "0%";
        }
        return new BigDecimal(part).multiply(BigDecimal.valueOf(100)).divide(new BigDecimal(total), 0, RoundingMode.HALF_EVEN)
                + "%";
    }

    /** A bordered table like the one Calico's calicoctl draws (tablewriter). */
    private void printTable(List<List<String>> rows) {
        int[] w = new int[HEADER.size()];
        for (int c = 0; c < w.length; c++) {
            w[c] = HEADER.get(c).length();
            for (List<String> r : rows) {
                w[c] = Math.max(w[c], r.get(c).length());
            }
        }
        StringBuilder line = new StringBuilder("+");
        for (int width : w) {
            line.append("-".repeat(width + 2)).append('+');
        }
        out.println(line);
        StringBuilder head = new StringBuilder("|");
        for (int c = 0; c < w.length; c++) {
            String h = HEADER.get(c);
            int left = (w[c] - h.length()) / 2;
            head.append(' ').append(" ".repeat(left)).append(h).append(" ".repeat(w[c] - h.length() - left)).append(" |");
        }
        out.println(head);
        out.println(line);
        for (List<String> r : rows) {
            StringBuilder sb = new StringBuilder("|");
            for (int c = 0; c < w.length; c++) {
                String v = r.get(c);
                // Numbers right-aligned, as tablewriter does; everything else left-aligned.
                boolean number = c == 2;
                sb.append(' ').append(number ? " ".repeat(w[c] - v.length()) + v : v + " ".repeat(w[c] - v.length())).append(" |");
            }
            out.println(sb);
        }
        out.println(line);
    }
}
