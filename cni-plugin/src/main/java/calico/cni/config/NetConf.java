package calico.cni.config;

import calico.api.net.Cidr;
import calico.cni.spec.CniError;
import calico.cni.spec.CniResult;
import calico.cni.spec.CniVersions;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Calico's network configuration (one plugin entry of a conflist, as the runtime passes it on
 * stdin), checked strictly: an unknown field is refused with code 2 naming it, a malformed one
 * with code 7 naming it, so a typo never silently falls back to a default.
 *
 * @param raw          the whole configuration as read (handed unchanged to a delegated IPAM plugin)
 * @param ipam         the {@code ipam} section
 * @param nodename     this node's name: {@code nodename}, else the first line of {@code nodename_file}
 *                     (default {@code /var/lib/calico/nodename}), else the host name
 * @param mtu          the veth MTU: {@code mtu}; without it (or 0) the number felix wrote to the MTU file
 *                     ({@code mtu_file}, ours; default Calico's {@code /var/lib/calico/mtu}), as Calico's
 *                     plugin reads it at each ADD; without the file 1500, Calico's default
 * @param logLevel     {@code log_level}, checked (debug, info, warning, error or none, any case; default info)
 * @param logFilePath  {@code log_file_path}, or null: the call logs to standard error
 * @param prevResult   the previous plugin's result, when chained
 */
public record NetConf(ObjectNode raw, String cniVersion, String name, String type, String datastoreType,
                      List<URI> etcdEndpoints, Ipam ipam, int mtu, String nodename, String logLevel,
                      String logFilePath, String policyType, String kubeconfig, CniResult prevResult) {

    public static final String CALICO_IPAM = "calico-ipam";
    static final Path DEFAULT_NODENAME_FILE = Path.of("/var/lib/calico/nodename");
    /** Where Calico's felix writes the pod MTU and Calico's plugin reads it. */
    static final Path DEFAULT_MTU_FILE = Path.of("/var/lib/calico/mtu");

    /** Fields Calico's plugin reads, plus the ones the specification and runtimes add. */
    private static final Set<String> KNOWN = Set.of("cniVersion", "name", "type", "datastore_type",
            "etcd_endpoints", "etcd_discovery_srv", "etcd_key_file", "etcd_cert_file", "etcd_ca_cert_file",
            "ipam", "mtu", "mtu_file", "nodename", "nodename_file", "nodename_file_optional", "log_level", "log_file_path",
            "log_file_max_size", "log_file_max_age", "log_file_max_count", "policy", "kubernetes",
            "prevResult", "runtimeConfig", "args", "capabilities", "container_settings", "feature_control",
            "num_queues", "disableCheck", "dns", "include_default_routes");
    private static final Set<String> KNOWN_CALICO_IPAM = Set.of("type", "assign_ipv4", "assign_ipv6",
            "ipv4_pools", "ipv6_pools", "subnet");

    /**
     * The {@code ipam} section. For {@code calico-ipam} the Calico fields are parsed; any other
     * type is delegated, and its section is not interpreted here.
     */
    public record Ipam(String type, boolean assignIpv4, boolean assignIpv6, List<Cidr> ipv4Pools,
                       List<Cidr> ipv6Pools) {
        public boolean calico() {
            return CALICO_IPAM.equals(type);
        }
    }

    public static NetConf parse(ObjectMapper json, byte[] stdin, String hostname) {
        JsonNode root;
        try {
            root = json.readTree(stdin);
        } catch (IOException e) {
            throw new CniError(CniError.DECODE_FAILURE, "network configuration: is not valid JSON",
                    e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new CniError(CniError.DECODE_FAILURE, "network configuration: is not a JSON object");
        }
        ObjectNode o = (ObjectNode) root;
        String cniVersion = string(o, "cniVersion", true);
        CniVersions.check(cniVersion);
        o.fieldNames().forEachRemaining(f -> {
            if (!KNOWN.contains(f)) {
                throw new CniError(CniError.UNSUPPORTED_FIELD, f + ": is not a field of Calico's network configuration");
            }
        });
        String name = string(o, "name", true);
        String type = string(o, "type", true);
        String ds = orDefault(string(o, "datastore_type", false), "etcdv3");
        // apiserver: Calico's own API server, reached with the daemon's CALICO_APISERVER_* variables.
        if (!ds.equals("etcdv3") && !ds.equals("kubernetes") && !ds.equals("apiserver")) {
            throw invalid("datastore_type", "'" + ds + "' is not etcdv3, kubernetes or apiserver");
        }
        List<URI> etcd = new ArrayList<>();
        String endpoints = string(o, "etcd_endpoints", false);
        if (endpoints != null) {
            for (String e : endpoints.split(",")) {
                try {
                    URI u = URI.create(e.trim());
                    if (u.getScheme() == null || u.getHost() == null || u.getPort() < 0) {
                        throw new IllegalArgumentException("needs scheme://host:port");
                    }
                    etcd.add(u);
                } catch (IllegalArgumentException ex) {
                    throw invalid("etcd_endpoints", "'" + e.trim() + "' is not a URL (" + ex.getMessage() + ")");
                }
            }
        }
        if (ds.equals("etcdv3") && etcd.isEmpty()) {
            throw invalid("etcd_endpoints", "is required when datastore_type is etcdv3");
        }
        int mtu = 0;
        if (o.has("mtu")) {
            JsonNode m = o.get("mtu");
            // 0 is Calico's "not set" (its manifests' CNI_MTU default): the MTU file decides.
            if (!m.canConvertToInt() || !m.isIntegralNumber() || (m.asInt() != 0 && (m.asInt() < 68 || m.asInt() > 65535))) {
                throw invalid("mtu", m + " is neither 0 (not set) nor an integer between 68 and 65535");
            }
            mtu = m.asInt();
        }
        String logLevel = orDefault(string(o, "log_level", false), "info");
        LogLevel.parse(logLevel); // refuses an unknown level, naming log_level
        String logFilePath = string(o, "log_file_path", false);
        if (logFilePath != null && logFilePath.isEmpty()) {
            logFilePath = null;
        }
        String policyType = null;
        if (o.has("policy")) {
            JsonNode p = object(o, "policy");
            policyType = p.path("type").asText(null);
            if (policyType != null && !policyType.equals("k8s")) {
                throw invalid("policy.type", "'" + policyType + "' is not k8s");
            }
        }
        String kubeconfig = null;
        if (o.has("kubernetes")) {
            kubeconfig = object(o, "kubernetes").path("kubeconfig").asText(null);
        }
        CniResult prev = o.has("prevResult") ? CniResult.parse(o.get("prevResult"), "prevResult") : null;
        if (mtu == 0) {
            mtu = mtuFromFile(o);
        }
        return new NetConf(o, cniVersion, name, type, ds, List.copyOf(etcd), ipam(o), mtu == 0 ? 1500 : mtu,
                nodename(o, hostname), logLevel, logFilePath, policyType, kubeconfig, prev);
    }

    private static Ipam ipam(ObjectNode o) {
        if (!o.has("ipam")) {
            throw invalid("ipam", "is required");
        }
        JsonNode i = object(o, "ipam");
        String type = string((ObjectNode) i, "type", false);
        if (type == null) {
            throw invalid("ipam.type", "is required");
        }
        if (!CALICO_IPAM.equals(type)) {
            return new Ipam(type, false, false, List.of(), List.of());
        }
        i.fieldNames().forEachRemaining(f -> {
            if (!KNOWN_CALICO_IPAM.contains(f)) {
                throw new CniError(CniError.UNSUPPORTED_FIELD, "ipam." + f + ": is not a field of calico-ipam");
            }
        });
        boolean v4 = bool(i, "assign_ipv4", true);
        boolean v6 = bool(i, "assign_ipv6", false);
        if (!v4 && !v6) {
            throw invalid("ipam.assign_ipv4", "assign_ipv4 and assign_ipv6 are both false: nothing to assign");
        }
        return new Ipam(type, v4, v6, pools(i, "ipv4_pools", 4), pools(i, "ipv6_pools", 6));
    }

    private static List<Cidr> pools(JsonNode ipam, String field, int version) {
        List<Cidr> out = new ArrayList<>();
        JsonNode a = ipam.get(field);
        if (a == null) {
            return out;
        }
        if (!a.isArray()) {
            throw invalid("ipam." + field, "is not a list of CIDRs");
        }
        for (JsonNode c : a) {
            Cidr cidr = Cidr.tryParse(c.asText()).orElseThrow(
                    () -> invalid("ipam." + field, "'" + c.asText() + "' is not a CIDR (pool names are not supported)"));
            if (cidr.version() != version) {
                throw invalid("ipam." + field, "'" + c.asText() + "' is not an IPv" + version + " CIDR");
            }
            out.add(cidr);
        }
        return out;
    }

    /** Calico writes these as strings ("true"/"false"); JSON booleans are accepted too. */
    private static boolean bool(JsonNode o, String field, boolean dflt) {
        JsonNode v = o.get(field);
        if (v == null) {
            return dflt;
        }
        String s = v.asText();
        if (s.equals("true") || s.equals("false")) {
            return Boolean.parseBoolean(s);
        }
        throw invalid("ipam." + field, v + " is not \"true\" or \"false\"");
    }

    private static String nodename(ObjectNode o, String hostname) {
        String n = string(o, "nodename", false);
        if (n != null) {
            return n;
        }
        String file = string(o, "nodename_file", false);
        Path p = file != null ? Path.of(file) : DEFAULT_NODENAME_FILE;
        if (Files.isReadable(p)) {
            try {
                String s = Files.readString(p).strip();
                if (!s.isEmpty()) {
                    return s;
                }
            } catch (IOException e) {
                throw invalid("nodename_file", p + " cannot be read: " + e.getMessage());
            }
        } else if (file != null && !o.path("nodename_file_optional").asBoolean(false)) {
            throw invalid("nodename_file", p + " does not exist (is calico/node running?)");
        }
        return hostname;
    }

    /** {@return the MTU felix wrote}, 0 when there is no file (felix has not run yet), as Calico's plugin. */
    private static int mtuFromFile(ObjectNode o) {
        String file = string(o, "mtu_file", false);
        Path p = file == null || file.isEmpty() ? DEFAULT_MTU_FILE : Path.of(file);
        String text;
        try {
            text = Files.readString(p).strip();
        } catch (java.nio.file.NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw invalid("mtu_file", p + " cannot be read: " + e.getMessage());
        }
        try {
            int mtu = Integer.parseInt(text);
            if (mtu >= 68 && mtu <= 65535) {
                return mtu;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw invalid("mtu_file", p + " holds '" + text + "', not an MTU between 68 and 65535");
    }

    private static JsonNode object(ObjectNode o, String field) {
        JsonNode v = o.get(field);
        if (!v.isObject()) {
            throw invalid(field, "is not an object");
        }
        return v;
    }

    private static String string(ObjectNode o, String field, boolean required) {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw invalid(field, "is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw invalid(field, v + " is not a string");
        }
        if (required && v.asText().isEmpty()) {
            throw invalid(field, "is required");
        }
        return v.asText();
    }

    private static String orDefault(String v, String d) {
        return v == null || v.isEmpty() ? d : v;
    }

    private static CniError invalid(String field, String reason) {
        return new CniError(CniError.INVALID_CONFIG, field + ": " + reason);
    }
}
