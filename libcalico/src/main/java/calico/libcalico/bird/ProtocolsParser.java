package calico.libcalico.bird;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Reads {@code show protocols [all]} replies: 1002 lines are protocols, 1006 lines their details. */
final class ProtocolsParser {

    private static final Pattern DATE = Pattern.compile("\\d{4}-\\d\\d-\\d\\d");

    private ProtocolsParser() {
    }

    static List<BirdProtocol> parse(BirdReply reply) {
        List<BirdProtocol> out = new ArrayList<>();
        BirdProtocol current = null;
        for (BirdReply.Line l : reply.lines()) {
            if (l.code() == 1002) {
                if (current != null) {
                    out.add(current);
                }
                current = row(l.text());
            } else if (l.code() == 1006 && current != null) {
                current = detail(current, l.text().trim());
            }
        }
        if (current != null) {
            out.add(current);
        }
        return out;
    }

    private static BirdProtocol row(String text) {
        String[] t = text.trim().split("\\s+", 5);
        String name = t[0];
        String proto = t.length > 1 ? t[1] : "";
        String state = t.length > 3 ? t[3] : "";
        String rest = t.length > 4 ? t[4] : "";
        String since = "";
        String[] r = rest.split("\\s+", 2);
        if (r.length > 0 && DATE.matcher(r[0]).matches()) {
            String[] r2 = r.length > 1 ? r[1].split("\\s+", 2) : new String[0];
            since = r[0] + (r2.length > 0 ? " " + r2[0] : "");
            rest = r2.length > 1 ? r2[1] : "";
        } else if (r.length > 0) {
            since = r[0];
            rest = r.length > 1 ? r[1] : "";
        }
        return new BirdProtocol(name, proto, state, since, rest.trim(), null, null, null);
    }

    private static BirdProtocol detail(BirdProtocol p, String line) {
        String bgp = value(line, "BGP state:");
        String nb = value(line, "Neighbor address:");
        String err = value(line, "Last error:");
        return new BirdProtocol(p.name(), p.proto(), p.state(), p.since(), p.info(),
                bgp != null && p.bgpState() == null ? bgp : p.bgpState(),
                nb != null && p.neighbor() == null ? nb : p.neighbor(),
                err != null && p.lastError() == null ? err : p.lastError());
    }

    private static String value(String line, String key) {
        return line.startsWith(key) ? line.substring(key.length()).trim() : null;
    }
}
