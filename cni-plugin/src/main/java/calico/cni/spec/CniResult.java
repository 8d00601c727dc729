package calico.cni.spec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A CNI result (the ADD output, and {@code prevResult} of the next plugin), version-neutral:
 * {@link #toJson} writes it in the 0.3.x/0.4.0 shape (with per-IP {@code version}) or the 1.x
 * shape; {@link #parse} reads either.
 */
public record CniResult(List<Interface> interfaces, List<Ip> ips, List<RouteEntry> routes, JsonNode dns) {

    public CniResult {
        interfaces = List.copyOf(interfaces);
        ips = List.copyOf(ips);
        routes = List.copyOf(routes);
    }

    /** One interface; {@code sandbox} is the netns path for an interface inside the container. */
    public record Interface(String name, String mac, String sandbox) {
    }

    /** One address as {@code a.b.c.d/len}; {@code interfaceIndex} points into interfaces (or -1). */
    public record Ip(String address, String gateway, int interfaceIndex) {
        public boolean ipv6() {
            return address.contains(":");
        }
    }

    public record RouteEntry(String dst, String gw) {
    }

    public ObjectNode toJson(ObjectMapper json, String cniVersion) {
        ObjectNode o = json.createObjectNode();
        o.put("cniVersion", cniVersion);
        ArrayNode ifs = o.putArray("interfaces");
        for (Interface i : interfaces) {
            ObjectNode n = ifs.addObject().put("name", i.name());
            if (i.mac() != null) {
                n.put("mac", i.mac());
            }
            if (i.sandbox() != null) {
                n.put("sandbox", i.sandbox());
            }
        }
        ArrayNode ipa = o.putArray("ips");
        for (Ip ip : ips) {
            ObjectNode n = ipa.addObject();
            if (!CniVersions.isOneDotX(cniVersion)) {
                n.put("version", ip.ipv6() ? "6" : "4");
            }
            n.put("address", ip.address());
            if (ip.gateway() != null) {
                n.put("gateway", ip.gateway());
            }
            if (ip.interfaceIndex() >= 0) {
                n.put("interface", ip.interfaceIndex());
            }
        }
        ArrayNode ra = o.putArray("routes");
        for (RouteEntry r : routes) {
            ObjectNode n = ra.addObject().put("dst", r.dst());
            if (r.gw() != null) {
                n.put("gw", r.gw());
            }
        }
        o.set("dns", dns == null ? json.createObjectNode() : dns);
        return o;
    }

    /** Reads a result of any supported version; a malformed one is a decode error (code 6) naming {@code field}. */
    public static CniResult parse(JsonNode n, String field) {
        if (n == null || !n.isObject()) {
            throw new CniError(CniError.DECODE_FAILURE, field + ": is not a CNI result object");
        }
        List<Interface> ifs = new ArrayList<>();
        for (JsonNode i : n.path("interfaces")) {
            ifs.add(new Interface(text(i, "name", field + ".interfaces"), i.path("mac").asText(null),
                    i.path("sandbox").asText(null)));
        }
        List<Ip> ips = new ArrayList<>();
        for (JsonNode i : n.path("ips")) {
            ips.add(new Ip(text(i, "address", field + ".ips"), i.path("gateway").asText(null),
                    i.has("interface") ? i.get("interface").asInt() : -1));
        }
        List<RouteEntry> routes = new ArrayList<>();
        for (JsonNode r : n.path("routes")) {
            routes.add(new RouteEntry(text(r, "dst", field + ".routes"), r.path("gw").asText(null)));
        }
        return new CniResult(ifs, ips, routes, n.get("dns"));
    }

    private static String text(JsonNode n, String name, String where) {
        JsonNode v = n.get(name);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new CniError(CniError.DECODE_FAILURE, where + "." + name + ": is missing or not a string");
        }
        return v.asText();
    }
}
