package calico.node.startup.app;

import calico.api.model.ASNumber;
import calico.api.model.EncapsulationMode;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import calico.node.startup.autodetect.AutodetectionMethod;
import calico.node.startup.steps.ClusterSettings;
import calico.node.startup.steps.NodeSettings;
import calico.node.startup.steps.NodeStartup;
import calico.node.startup.steps.PoolSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * calico-node's start-up settings, bound from Calico's variables by {@code application.yml} and
 * checked here, once: every error names the property and its variable and says why
 * ({@code node.ipv4-pool.block-size (CALICO_IPV4POOL_BLOCK_SIZE): 33 is not between 20 and 32}).
 *
 * @param nodename               {@code NODENAME}, else {@code HOSTNAME}, else the host's name; lower-cased
 * @param k8sNodeRef             {@code CALICO_K8S_NODE_REF}: the Kubernetes Node, when its name differs
 * @param ip                     {@code IP}: an IPv4 address or CIDR, {@code autodetect}, {@code none} or empty
 * @param ip6                    {@code IP6}: the same for IPv6
 * @param ipAutodetectionMethod  {@code IP_AUTODETECTION_METHOD}
 * @param ip6AutodetectionMethod {@code IP6_AUTODETECTION_METHOD}
 * @param as                     {@code AS}: the node's AS number; empty keeps the Node's
 * @param networkingBackend      {@code CALICO_NETWORKING_BACKEND}: {@code bird}, {@code vxlan} or {@code none}
 * @param noDefaultPools         {@code NO_DEFAULT_POOLS}: {@code true} creates no pool
 * @param disableNodeIpCheck     {@code DISABLE_NODE_IP_CHECK}: {@code true} allows two Nodes one address
 * @param clusterType            {@code CLUSTER_TYPE}
 * @param calicoVersion          written into ClusterInformation ({@code CALICO_VERSION}, ours)
 * @param ipv6Support            {@code FELIX_IPV6SUPPORT}: false creates no IPv6 pool
 * @param ipv4Pool               {@code CALICO_IPV4POOL_*}
 * @param ipv6Pool               {@code CALICO_IPV6POOL_*}
 * @param netns                  {@code CALICO_NODE_NETNS} (ours): the network namespace ({@code /run/netns/<name>})
 *                               that is the node, whose interfaces autodetection reads, when start-up runs
 *                               outside it (the datastore stays reachable); empty for the process's own
 * @param waitForDatastore       {@code WAIT_FOR_DATASTORE}: {@code true} (only that, as Calico compares it)
 *                               retries an unreachable datastore every second instead of failing
 * @param wireguardHostEncryption {@code FELIX_WIREGUARDHOSTENCRYPTIONENABLED} (felix's, read from the environment
 *                               as calico-node's tunnel address allocator reads it): no WireGuard tunnel address
 * @param nodenameFile           {@code CALICO_NODENAME_FILE}: where start-up leaves the node's name for the CNI
 *                               plugin's {@code nodename_file}; empty is Calico's {@code /var/lib/calico/nodename}
 */
@ConfigurationProperties(prefix = "node")
public record StartupProperties(String nodename, String k8sNodeRef, String ip, String ip6, String ipAutodetectionMethod,
                                String ip6AutodetectionMethod, String as, String networkingBackend,
                                String noDefaultPools, String disableNodeIpCheck, String clusterType,
                                String calicoVersion, String ipv6Support, Pool ipv4Pool, Pool ipv6Pool,
                                String netns, String waitForDatastore, String wireguardHostEncryption,
                                String nodenameFile) {

    /**
     * One default pool's variables, as given ({@code CALICO_IPV4POOL_CIDR}, {@code _BLOCK_SIZE}, {@code _IPIP},
     * {@code _VXLAN}, {@code _NAT_OUTGOING}, {@code _NODE_SELECTOR}, {@code _DISABLE_BGP_EXPORT}).
     */
    public record Pool(String cidr, String blockSize, String ipip, String vxlan, String natOutgoing,
                       String nodeSelector, String disableBgpExport) {
    }

    public StartupProperties {
        nodename = nodename(nodename);
        k8sNodeRef = trim(k8sNodeRef);
        netns = trim(netns);
        nodenameFile = trim(nodenameFile).isEmpty() ? NodenameFile.DEFAULT.toString() : trim(nodenameFile);
        if (!netns.isEmpty() && !netns.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("node.netns (CALICO_NODE_NETNS): \"" + netns
                    + "\" is not a namespace name (letters, digits, '.', '_', '-')");
        }
        networkingBackend = trim(networkingBackend).isEmpty() ? "bird" : trim(networkingBackend).toLowerCase(Locale.ROOT);
        if (!networkingBackend.matches("bird|vxlan|none")) {
            throw new IllegalArgumentException("node.networking-backend (CALICO_NETWORKING_BACKEND): \""
                    + networkingBackend + "\" is not one of bird, vxlan, none");
        }
        ipv4Pool = ipv4Pool == null ? new Pool(null, null, null, null, null, null, null) : ipv4Pool;
        ipv6Pool = ipv6Pool == null ? new Pool(null, null, null, null, null, null, null) : ipv6Pool;
        if (trim(noDefaultPools).equalsIgnoreCase("true")
                && (!trim(ipv4Pool.cidr()).isEmpty() || !trim(ipv6Pool.cidr()).isEmpty())) {
            throw new IllegalArgumentException("node.no-default-pools (NO_DEFAULT_POOLS): true contradicts "
                    + "CALICO_IPV4POOL_CIDR / CALICO_IPV6POOL_CIDR being set; set one or the other");
        }
        // Parsed now (the fields are not assigned yet: hence the static form) so that a bad value fails
        // start-up before anything is written.
        settings(nodename, k8sNodeRef, ip, ip6, ipAutodetectionMethod, ip6AutodetectionMethod, as, networkingBackend,
                noDefaultPools, disableNodeIpCheck, clusterType, calicoVersion, ipv6Support, ipv4Pool, ipv6Pool,
                wireguardHostEncryption, false);
    }

    /** {@return the typed settings start-up runs with} */
    public NodeStartup.Settings toSettings(boolean kubernetesDatastore) {
        return settings(nodename, k8sNodeRef, ip, ip6, ipAutodetectionMethod, ip6AutodetectionMethod, as,
                networkingBackend, noDefaultPools, disableNodeIpCheck, clusterType, calicoVersion, ipv6Support, ipv4Pool,
                ipv6Pool, wireguardHostEncryption, kubernetesDatastore);
    }

    @SuppressWarnings("checkstyle:ParameterNumber")
    private static NodeStartup.Settings settings(String nodename, String k8sNodeRef, String ip, String ip6,
            String ipAutodetectionMethod, String ip6AutodetectionMethod, String as, String networkingBackend,
            String noDefaultPools, String disableNodeIpCheck, String clusterType, String calicoVersion,
            String ipv6Support, Pool ipv4Pool, Pool ipv6Pool, String wireguardHostEncryption,
            boolean kubernetesDatastore) {
        boolean noPools = trim(noDefaultPools).equalsIgnoreCase("true");
        String k8sName = k8sNodeRef.isEmpty() ? nodename : k8sNodeRef;
        NodeSettings node = new NodeSettings(nodename, k8sName, !k8sNodeRef.isEmpty(),
                calico.node.startup.steps.AddressSetting.parse(ip, 4, "node.ip (IP)"),
                calico.node.startup.steps.AddressSetting.parse(ip6, 6, "node.ip6 (IP6)"),
                AutodetectionMethod.parse(ipAutodetectionMethod, "node.ip-autodetection-method (IP_AUTODETECTION_METHOD)"),
                AutodetectionMethod.parse(ip6AutodetectionMethod,
                        "node.ip6-autodetection-method (IP6_AUTODETECTION_METHOD)"),
                asNumber(as), networkingBackend.equals("none"), !trim(disableNodeIpCheck).equalsIgnoreCase("true"),
                calicoBool(wireguardHostEncryption, false));
        PoolSettings v4 = noPools ? PoolSettings.disabled() : pool(ipv4Pool, 4);
        PoolSettings v6 = noPools ? PoolSettings.disabled() : pool(ipv6Pool, 6);
        return new NodeStartup.Settings(node, v4, v6, calicoBool(ipv6Support, true),
                new ClusterSettings(trim(calicoVersion), trim(clusterType), kubernetesDatastore));
    }

    private static PoolSettings pool(Pool p, int v) {
        String var = "CALICO_IPV" + v + "POOL_";
        String prop = "node.ipv" + v + "-pool.";
        String cidrText = trim(p.cidr());
        if (cidrText.equals("none")) {
            return PoolSettings.disabled();
        }
        Optional<Cidr> cidr = Optional.empty();
        if (!cidrText.isEmpty()) {
            Cidr c = Cidr.tryParse(cidrText).filter(x -> x.version() == v).orElseThrow(() -> new IllegalArgumentException(
                    prop + "cidr (" + var + "CIDR): \"" + cidrText + "\" is not an IPv" + v + " CIDR"));
            cidr = Optional.of(c.network());
        }
        int min = v == 4 ? 20 : 116;
        int max = v == 4 ? 32 : 128;
        String bs = trim(p.blockSize()).isEmpty() ? (v == 4 ? "26" : "122") : trim(p.blockSize());
        int blockSize;
        try {
            blockSize = Integer.parseInt(bs);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(prop + "block-size (" + var + "BLOCK_SIZE): \"" + bs + "\" is not a number");
        }
        if (blockSize < min || blockSize > max) {
            throw new IllegalArgumentException(prop + "block-size (" + var + "BLOCK_SIZE): " + blockSize
                    + " is not between " + min + " and " + max);
        }
        EncapsulationMode ipip = v == 4 ? mode(p.ipip(), prop + "ipip (" + var + "IPIP)") : EncapsulationMode.Never;
        EncapsulationMode vxlan = mode(p.vxlan(), prop + "vxlan (" + var + "VXLAN)");
        String selector = trim(p.nodeSelector());
        if (!selector.isEmpty()) {
            try {
                Selector.parse(selector);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(prop + "node-selector (" + var + "NODE_SELECTOR): \"" + selector
                        + "\" is not a selector: " + e.getMessage());
            }
        }
        return new PoolSettings(true, cidr, blockSize, ipip, vxlan, calicoBool(p.natOutgoing(), v == 4), selector,
                calicoBool(p.disableBgpExport(), false));
    }

    /** Calico's spellings: empty, off, never; crosssubnet, cross-subnet; always (any case). */
    private static EncapsulationMode mode(String text, String setting) {
        String t = trim(text).toLowerCase(Locale.ROOT);
        return switch (t) {
            case "", "off", "never" -> EncapsulationMode.Never;
            case "crosssubnet", "cross-subnet" -> EncapsulationMode.CrossSubnet;
            case "always" -> EncapsulationMode.Always;
            default -> throw new IllegalArgumentException(setting + ": \"" + text.trim()
                    + "\" is not one of Always, CrossSubnet, Never");
        };
    }

    private static ASNumber asNumber(String text) {
        String t = trim(text);
        if (t.isEmpty()) {
            return null;
        }
        try {
            return ASNumber.parse(t);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("node.as (AS): \"" + t + "\" is not an AS number: " + e.getMessage());
        }
    }

    /** Calico's {@code evaluateENVBool}: unset is the default; false, 0, no, n, f are false; anything else true. */
    private static boolean calicoBool(String text, boolean unset) {
        String t = trim(text).toLowerCase(Locale.ROOT);
        if (t.isEmpty()) {
            return unset;
        }
        return !(t.equals("false") || t.equals("0") || t.equals("no") || t.equals("n") || t.equals("f"));
    }

    /** Calico's {@code DetermineNodeName}: NODENAME (or HOSTNAME, mapped in application.yml), else the host name. */
    private static String nodename(String given) {
        String n = trim(given);
        if (n.isEmpty()) {
            try {
                n = InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("node.nodename (NODENAME or HOSTNAME): not set, and the host name "
                        + "is unknown: " + e.getMessage());
            }
        }
        return n.trim().toLowerCase(Locale.ROOT);
    }

    /** {@return whether start-up waits for an unreachable datastore} ({@code WAIT_FOR_DATASTORE=true}). */
    public boolean waitsForDatastore() {
        return "true".equals(trim(waitForDatastore));
    }

    private static String trim(String s) {
        return s == null ? "" : s.trim();
    }
}
