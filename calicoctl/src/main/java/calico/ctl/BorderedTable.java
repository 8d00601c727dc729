package calico.ctl;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/**
 * The bordered table Calico's calicoctl draws (Go's tablewriter): {@code +---+} rules, headings
 * centred (the odd space on the right), cells padded by one space, left-aligned unless their
 * column is right-aligned (tablewriter's numbers).
 */
final class BorderedTable {

    private BorderedTable() {
    }

    static void print(PrintStream out, List<String> header, List<List<String>> rows, Set<Integer> rightAligned) {
        int[] w = new int[header.size()];
        for (int c = 0; c < w.length; c++) {
            w[c] = header.get(c).length();
            for (List<String> r : rows) {
                w[c] = Math.max(w[c], r.get(c).length());
            }
        }
        StringBuilder rule = new StringBuilder("+");
        for (int width : w) {
            rule.append("-".repeat(width + 2)).append('+');
        }
        StringBuilder head = new StringBuilder("|");
        for (int c = 0; c < w.length; c++) {
            String h = header.get(c);
            int left = (w[c] - h.length()) / 2;
            head.append(' ').append(" ".repeat(left)).append(h).append(" ".repeat(w[c] - h.length() - left)).append(" |");
        }
        out.println(rule);
        out.println(head);
        out.println(rule);
        for (List<String> r : rows) {
            StringBuilder line = new StringBuilder("|");
            for (int c = 0; c < w.length; c++) {
                String v = r.get(c);
                String pad = " ".repeat(w[c] - v.length());
                line.append(' ').append(rightAligned.contains(c) ? pad + v : v + pad).append(" |");
            }
            out.println(line);
        }
        out.println(rule);
    }
}
