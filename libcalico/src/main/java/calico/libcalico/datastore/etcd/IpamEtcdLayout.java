package calico.libcalico.datastore.etcd;

import calico.api.codec.ResourceCodec;
import calico.api.model.BlockAffinity;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMHandle;
import calico.api.model.IpamNames;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;

/**
 * Calico's etcdv3 layout for the four IPAM kinds (libcalico-go {@code lib/backend/model}), which,
 * unlike every other kind, are not stored as v3 resources:
 *
 * <pre>
 * /calico/ipam/v2/assignment/ipv4/block/10.0.0.0-26        AllocationBlock (v1 JSON)
 * /calico/ipam/v2/host/&lt;node&gt;/ipv4/block/10.0.0.0-26      {"state":"confirmed","deleted":false}
 * /calico/ipam/v2/handle/&lt;handle id&gt;                       {"block":{"10.0.0.0/26":1},"deleted":false}
 * /calico/ipam/v2/config                                    {"strict_affinity":false,"auto_allocate_blocks":true,...}
 * </pre>
 *
 * The resources callers see are the same as on every other backend (names from {@link IpamNames},
 * {@code resourceVersion} the key's mod revision). What v1 values do not hold is derived on read:
 * an affinity's node and CIDR come from its key, a handle's ID from its key (kept in the value as
 * {@code handleID} too, which Calico's readers ignore, so its case survives), and {@code uid} is
 * a name-based UUID of the key and its create revision (stable while the key lives). There is no
 * {@code creationTimestamp} and there are no labels.
 */
final class IpamEtcdLayout {

    static final String ROOT = "/calico/ipam/v2/";
    static final String BLOCKS = ROOT + "assignment/";
    static final String HOSTS = ROOT + "host/";
    static final String HANDLES = ROOT + "handle/";
    static final String CONFIG = ROOT + "config";

    private IpamEtcdLayout() {
    }

    static boolean covers(ResourceKind kind) {
        return kind == ResourceKind.IPAM_BLOCK || kind == ResourceKind.BLOCK_AFFINITY
                || kind == ResourceKind.IPAM_HANDLE || kind == ResourceKind.IPAM_CONFIGURATION;
    }

    static String prefix(ResourceKind kind) {
        return switch (kind) {
            case IPAM_BLOCK -> BLOCKS;
            case BLOCK_AFFINITY -> HOSTS;
            case IPAM_HANDLE -> HANDLES;
            case IPAM_CONFIGURATION -> CONFIG;
            default -> throw new IllegalArgumentException(kind + " is not an IPAM kind");
        };
    }

    static String blockPath(Cidr cidr) {
        Cidr c = cidr.network();
        return BLOCKS + "ipv" + c.version() + "/block/" + c.toString().replace('/', '-');
    }

    static String affinityPath(String node, Cidr cidr) {
        Cidr c = cidr.network();
        return HOSTS + node + "/ipv" + c.version() + "/block/" + c.toString().replace('/', '-');
    }

    /**
     * {@return the key of {@code key}}, or empty for an affinity whose name cannot be turned back
     * into node and CIDR (an IPv6 block, or a hashed name): the caller looks it up among the keys.
     */
    static Optional<String> path(ResourceKey key) {
        String name = key.name();
        return switch (key.kind()) {
            case IPAM_BLOCK -> Optional.of(blockPath(blockCidr(name).orElseThrow(() -> new IllegalArgumentException(
                    "metadata.name: '" + name + "' is not the name of a block (e.g. 10-0-0-0-26)"))));
            case IPAM_HANDLE -> Optional.of(HANDLES + name);
            case IPAM_CONFIGURATION -> Optional.of(name.equals(IpamNames.IPAM_CONFIG_NAME) ? CONFIG : CONFIG + "/" + name);
            case BLOCK_AFFINITY -> ipv4Affinity(name);
            default -> throw new IllegalArgumentException(key.kind() + " is not an IPAM kind");
        };
    }

    /** {@return the key a resource is written at}: for an affinity, from its spec's node and CIDR. */
    static String path(Resource r) {
        if (r instanceof BlockAffinity a) {
            Cidr cidr = Cidr.parse(a.spec().cidr());
            String expected = IpamNames.affinityName(a.spec().node(), cidr);
            if (!expected.equals(a.metadata().name())) {
                throw new IllegalArgumentException("metadata.name: '" + a.metadata().name() + "' is not the name of "
                        + a.spec().node() + "'s affinity to " + cidr + " ('" + expected + "')");
            }
            return affinityPath(a.spec().node(), cidr);
        }
        return path(r.key()).orElseThrow();
    }

    /** {@return the resource key stored at {@code k}}, or empty when {@code k} is not an IPAM key. */
    static Optional<ResourceKey> parse(String k) {
        if (k.equals(CONFIG)) {
            return Optional.of(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, IpamNames.IPAM_CONFIG_NAME));
        }
        if (k.startsWith(CONFIG + "/") && k.length() > CONFIG.length() + 1 && k.indexOf('/', CONFIG.length() + 1) < 0) {
            return Optional.of(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, k.substring(CONFIG.length() + 1)));
        }
        if (k.startsWith(HANDLES)) {
            String id = k.substring(HANDLES.length());
            return id.isEmpty() || id.contains("/") ? Optional.empty()
                    : Optional.of(ResourceKey.of(ResourceKind.IPAM_HANDLE, IpamNames.handleName(id)));
        }
        String[] p;
        if (k.startsWith(BLOCKS)) {
            p = k.substring(BLOCKS.length()).split("/", -1);
            if (p.length == 3 && p[1].equals("block") && (p[0].equals("ipv4") || p[0].equals("ipv6"))) {
                return cidrOfKey(p[2]).map(c -> ResourceKey.of(ResourceKind.IPAM_BLOCK, IpamNames.blockName(c)));
            }
            return Optional.empty();
        }
        if (k.startsWith(HOSTS)) {
            p = k.substring(HOSTS.length()).split("/", -1);
            if (p.length == 4 && !p[0].isEmpty() && p[2].equals("block") && (p[1].equals("ipv4") || p[1].equals("ipv6"))) {
                String node = p[0];
                return cidrOfKey(p[3]).map(c -> ResourceKey.of(ResourceKind.BLOCK_AFFINITY, IpamNames.affinityName(node, c)));
            }
        }
        return Optional.empty();
    }

    // ------------------------------------------------------------------ values

    /** {@return the v1 value Calico stores for {@code r}}. */
    static byte[] encode(Resource r, ObjectMapper json) {
        ObjectNode v = json.createObjectNode();
        if (r instanceof IPAMBlock b) {
            v = json.valueToTree(b.spec());
            // Calico's v1 AllocationBlock always has these (a Go nil slice is null; an empty one []).
            if (!v.has("allocations")) {
                v.putArray("allocations");
            }
            if (!v.has("unallocated")) {
                v.putArray("unallocated");
            }
            if (!v.has("attributes")) {
                v.putArray("attributes");
            }
            if (!v.has("affinity")) {
                v.putNull("affinity");
            }
            v.put("deleted", Boolean.TRUE.equals(b.spec().deleted()));
            v.put("sequenceNumber", b.spec().sequenceNumber() == null ? 0 : b.spec().sequenceNumber());
        } else if (r instanceof BlockAffinity a) {
            v.put("state", a.spec().state());
            v.put("deleted", "true".equals(a.spec().deleted()));
        } else if (r instanceof IPAMHandle h) {
            v.put("handleID", h.spec().handleID());
            v.set("block", json.valueToTree(h.spec().block()));
            v.put("deleted", Boolean.TRUE.equals(h.spec().deleted()));
        } else if (r instanceof IPAMConfiguration c) {
            if (c.spec() != null) {
                putIf(v, "strict_affinity", c.spec().strictAffinity());
                putIf(v, "auto_allocate_blocks", c.spec().autoAllocateBlocks());
                if (c.spec().maxBlocksPerHost() != null) {
                    v.put("maxBlocksPerHost", c.spec().maxBlocksPerHost());
                }
            }
        } else {
            throw new IllegalArgumentException(r.resourceKind() + " is not an IPAM kind");
        }
        try {
            return json.writeValueAsBytes(v);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putIf(ObjectNode v, String field, Boolean b) {
        if (b != null) {
            v.put(field, b);
        }
    }

    /**
     * {@return the resource stored at {@code etcdKey} with v1 value {@code value}} (without its
     * resourceVersion; the caller sets it).
     *
     * @throws calico.api.codec.ResourceParseException when the value is not Calico's v1 JSON
     */
    static Resource decode(ResourceKind kind, String etcdKey, byte[] value, long createRevision, ResourceCodec codec) {
        ObjectMapper json = codec.jsonMapper();
        ResourceKey key = parse(etcdKey).filter(k -> k.kind() == kind).orElseThrow(() ->
                new calico.api.codec.ResourceParseException("", etcdKey + " is not a " + kind.kind() + " key"));
        JsonNode v;
        try {
            v = json.readTree(value);
        } catch (IOException e) {
            throw new calico.api.codec.ResourceParseException("", "not JSON: " + e.getMessage());
        }
        if (v == null || !v.isObject()) {
            throw new calico.api.codec.ResourceParseException("", "not a JSON object");
        }
        ObjectNode spec = json.createObjectNode();
        switch (kind) {
            case IPAM_BLOCK -> {
                spec = ((ObjectNode) v).deepCopy();
                if (spec.path("affinity").isNull()) {
                    spec.remove("affinity");
                }
            }
            case BLOCK_AFFINITY -> {
                String[] p = etcdKey.substring(HOSTS.length()).split("/");
                spec.put("state", v.path("state").asText(""));
                spec.put("node", p[0]);
                spec.put("cidr", cidrOfKey(p[3]).orElseThrow().toString());
                spec.put("deleted", v.path("deleted").asBoolean(false) ? "true" : "false");
            }
            case IPAM_HANDLE -> {
                String id = v.path("handleID").asText("");
                spec.put("handleID", id.isEmpty() ? etcdKey.substring(HANDLES.length()) : id);
                spec.set("block", v.path("block").isObject() ? v.get("block") : json.createObjectNode());
                if (v.path("deleted").asBoolean(false)) {
                    spec.put("deleted", true);
                }
            }
            case IPAM_CONFIGURATION -> {
                if (v.has("strict_affinity")) {
                    spec.put("strictAffinity", v.path("strict_affinity").asBoolean());
                }
                if (v.has("auto_allocate_blocks")) {
                    spec.put("autoAllocateBlocks", v.path("auto_allocate_blocks").asBoolean());
                }
                if (v.has("maxBlocksPerHost")) {
                    spec.put("maxBlocksPerHost", v.path("maxBlocksPerHost").asInt());
                }
            }
            default -> throw new IllegalArgumentException(kind + " is not an IPAM kind");
        }
        ObjectNode r = json.createObjectNode();
        r.put("apiVersion", "projectcalico.org/v3");
        r.put("kind", kind.kind());
        ObjectNode meta = r.putObject("metadata");
        meta.put("name", key.name());
        meta.put("uid", UUID.nameUUIDFromBytes((etcdKey + "@" + createRevision).getBytes(StandardCharsets.UTF_8)).toString());
        r.set("spec", spec);
        try {
            return codec.read(kind, json.writeValueAsBytes(r));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ names

    /** The block name ({@code 10-0-0-0-26}, {@code fd00-cafe---122}) back to its CIDR. */
    static Optional<Cidr> blockCidr(String name) {
        int dash = name.lastIndexOf('-');
        if (dash <= 0) {
            return Optional.empty();
        }
        String addr = name.substring(0, dash);
        String len = name.substring(dash + 1);
        String[] four = addr.split("-", -1);
        String text = four.length == 4 && java.util.Arrays.stream(four).allMatch(s -> s.matches("[0-9]{1,3}"))
                ? String.join(".", four) : addr.replace('-', ':');
        return Cidr.tryParse(text + "/" + len).filter(c -> IpamNames.blockName(c).equals(name));
    }

    /** An IPv4 affinity name {@code <node>-a-b-c-d-len} (not hashed) back to its key. */
    private static Optional<String> ipv4Affinity(String name) {
        String[] p = name.split("-", -1);
        if (p.length < 6) {
            return Optional.empty();
        }
        String block = String.join("-", java.util.Arrays.copyOfRange(p, p.length - 5, p.length));
        String node = String.join("-", java.util.Arrays.copyOfRange(p, 0, p.length - 5));
        Optional<Cidr> cidr = blockCidr(block).filter(c -> c.version() == 4);
        if (node.isEmpty() || cidr.isEmpty() || !IpamNames.affinityName(node, cidr.get()).equals(name)) {
            return Optional.empty();
        }
        return Optional.of(affinityPath(node, cidr.get()));
    }

    private static Optional<Cidr> cidrOfKey(String dashed) {
        int dash = dashed.lastIndexOf('-');
        if (dash <= 0) {
            return Optional.empty();
        }
        return Cidr.tryParse(dashed.substring(0, dash) + "/" + dashed.substring(dash + 1)).map(Cidr::network);
    }
}
