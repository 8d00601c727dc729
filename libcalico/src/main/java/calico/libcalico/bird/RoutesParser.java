package calico.libcalico.bird;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code show route [all]} replies (BIRD 2): 1007 lines (and their continuations) are
 * {@code Table <name>:} headings, routes and their next hops; 1008/1012 lines are attributes.
 * A route's line leaves the prefix out when it is another route to the previous prefix.
 */
final class RoutesParser {

    /** {@code [<prefix>] <kind> [<protocol> <time...>] [*] (<pref>)...} */
    private static final Pattern ROUTE = Pattern.compile(
            "^(\\S+)?\\s+(unicast|blackhole|unreachable|prohibit)\\s+\\[(\\S+)[^]]*]\\s*(\\*)?.*$");
    private static final Pattern VIA = Pattern.compile("^via\\s+(\\S+)\\s+on\\s+(\\S+).*$");
    private static final Pattern DEV = Pattern.compile("^dev\\s+(\\S+).*$");

    private RoutesParser() {
    }

    static List<BirdRoute> parse(BirdReply reply) {
        List<BirdRoute> out = new ArrayList<>();
        String table = "";
        String prefix = null;
        for (BirdReply.Line l : reply.lines()) {
            if (l.code() != 1007) {
                continue;
            }
            String raw = l.text();
            String t = raw.trim();
            if (t.startsWith("Table ") && t.endsWith(":")) {
                table = t.substring("Table ".length(), t.length() - 1);
                continue;
            }
            Matcher r = ROUTE.matcher(raw.replace('\t', ' '));
            if (r.matches()) {
                if (r.group(1) != null && !raw.startsWith(" ") && !raw.startsWith("\t")) {
                    prefix = r.group(1);
                }
                if (prefix != null) {
                    out.add(new BirdRoute(table, prefix, r.group(2), r.group(3), r.group(4) != null, null, null));
                }
                continue;
            }
            if (out.isEmpty()) {
                continue;
            }
            int last = out.size() - 1;
            Matcher via = VIA.matcher(t);
            Matcher dev = DEV.matcher(t);
            if (via.matches() && out.get(last).gateway() == null) {
                out.set(last, out.get(last).withNextHop(via.group(1), via.group(2)));
            } else if (dev.matches() && out.get(last).iface() == null) {
                out.set(last, out.get(last).withNextHop(null, dev.group(1)));
            }
        }
        return out;
    }
}
