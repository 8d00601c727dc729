package calico.confd.render;

import java.util.List;

/** A {@link Session} as the template prints it: absent settings are {@code null}. */
record SessionView(String name, String description, String family, String familyFunction, String neighbor,
                   String neighborPort, String localAddress, String localPort, long localAs, long asNumber,
                   String password, String rrClusterId, Long restartTime, Integer ttlSecurity, Integer allowLocalAs,
                   String nextHop, boolean strictBind, List<String> importCalls, List<String> exportCalls,
                   String reachableBy, String neighborPrefix) {

    static SessionView of(Session s, Integer listenPort, boolean strictBind) {
        String flag = s.ebgp() ? "true" : "false";
        return new SessionView(s.name(), s.source(), s.family(), s.family().equals("ipv4") ? "v4" : "v6",
                s.neighbor(), s.port() == null ? null : s.port().toString(), s.localAddress(),
                listenPort == null ? null : listenPort.toString(), s.localAs(), s.asNumber(), s.password(),
                s.rrClusterId(), s.restartTime(), s.ttlSecurity(), s.allowLocalAs(), s.nextHop(),
                strictBind && s.localAddress() != null,
                s.importCalls().stream().map(c -> c + "(" + flag + ");").toList(),
                s.exportCalls().stream().map(c -> c + "(" + flag + ");").toList(), s.reachableBy(),
                s.neighbor() + (s.family().equals("ipv4") ? "/32" : "/128"));
    }
}
