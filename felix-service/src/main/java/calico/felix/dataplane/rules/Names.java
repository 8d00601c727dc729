package calico.felix.dataplane.rules;

import calico.dataplane.iptables.IpsetTransaction;
import calico.dataplane.iptables.RestoreTransaction;
import calico.felix.calc.PolicyId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Chain and IP set names, following Calico's layout: {@code cali-pi-}/{@code cali-po-} for a
 * policy's inbound/outbound rules, {@code cali-pri-}/{@code cali-pro-} for a profile's,
 * {@code cali-tw-}/{@code cali-fw-} for an endpoint's to/from-workload chains, {@code cali40}
 * for IPv4 sets. A name that would pass the kernel's limit keeps its prefix and replaces the
 * rest with {@code _} and a hash, so it stays unique and stable across restarts.
 */
public final class Names {

    public static final String CHAIN_PREFIX = "cali-";
    public static final String FORWARD = "cali-FORWARD";
    /** Forwarded traffic to advertised service ranges that nothing DNAT'd ({@code serviceLoopPrevention}). */
    public static final String CIDR_BLOCK = "cali-cidr-block";
    public static final String FROM_WL_DISPATCH = "cali-from-wl-dispatch";
    public static final String TO_WL_DISPATCH = "cali-to-wl-dispatch";
    public static final String INPUT = "cali-INPUT";
    public static final String OUTPUT = "cali-OUTPUT";
    /** Traffic from a workload to the host itself: the workload's egress policy, then defaultEndpointToHostAction. */
    public static final String WL_TO_HOST = "cali-wl-to-host";
    /**
     * nftables only ({@link RuleSettings#judgesEgressAtPrerouting()}): traffic from workloads, at prerouting after
     * DNAT: the workload's egress policy, judged once for forwarded and host-bound traffic alike.
     */
    public static final String WL_EGRESS = "cali-wl-egress";
    public static final String FAILSAFE_IN = "cali-failsafe-in";
    public static final String FAILSAFE_OUT = "cali-failsafe-out";
    public static final String FROM_HOST_DISPATCH = "cali-from-host-endpoint";
    public static final String TO_HOST_DISPATCH = "cali-to-host-endpoint";
    /** Forwarded traffic by incoming / outgoing host endpoint (applyOnForward policy). */
    public static final String FROM_HEP_FORWARD_DISPATCH = "cali-from-hep-forward";
    public static final String TO_HEP_FORWARD_DISPATCH = "cali-to-hep-forward";
    /** raw and mangle tables' PREROUTING chain (raw's OUTPUT chain is {@link #OUTPUT}). */
    /** kube-proxy in IPVS mode (Calico's names): INPUT's test for traffic to police as forwarded ... */
    public static final String FORWARD_CHECK = "cali-forward-check";
    /** ... the incoming interface's endpoint mark set on it ... */
    public static final String SET_ENDPOINT_MARK = "cali-set-endpoint-mark";
    /** ... and, in OUTPUT, that endpoint's policy by the mark, then the outgoing endpoint's. */
    public static final String FROM_ENDPOINT_MARK = "cali-from-endpoint-mark";
    public static final String FORWARD_ENDPOINT_MARK = "cali-forward-endpoint-mark";
    /** The interface kube-proxy's IPVS mode creates; felix finding it means IPVS mode. */
    public static final String KUBE_IPVS_INTERFACE = "kube-ipvs0";
    public static final String PREROUTING = "cali-PREROUTING";
    /** The interface name the all-interfaces ({@code interfaceName: "*"}) host endpoint's chains carry. */
    public static final String ALL_INTERFACES = "any-interface-at-all";
    /** nat table. */
    public static final String POSTROUTING = "cali-POSTROUTING";
    public static final String NAT_OUTGOING = "cali-nat-outgoing";
    /** nat table, floatingIPs Enabled: workloads' floating IPs (cali-PREROUTING and cali-OUTPUT jump to the DNAT chain). */
    public static final String FIP_DNAT = "cali-fip-dnat";
    public static final String FIP_SNAT = "cali-fip-snat";
    /** Driver set IDs (kernel names {@code cali40all-ipam-pools}, ...): every IP pool, and the natOutgoing ones. */
    public static final String ALL_POOLS_SET = "all-ipam-pools";
    public static final String MASQ_POOLS_SET = "masq-ipam-pools";
    /** Every Calico host's address: where IPIP and VXLAN may come from (kernel name {@code cali40all-hosts-net}). */
    public static final String ALL_HOSTS_SET = "all-hosts-net";
    /** Calico's default VXLAN port; the rules use the {@code vxlanPort} setting. */
    public static final int VXLAN_PORT = 4789;
    public static final String IPSET_V4_TEMP_PREFIX = "cali4t";
    public static final String IPSET_V6_TEMP_PREFIX = "cali6t";
    public static final String IPSET_V4_PREFIX = "cali40";
    public static final String IPSET_V6_PREFIX = "cali60";
    private static final java.util.regex.Pattern READABLE_SET_ID = java.util.regex.Pattern.compile("[a-z0-9][a-z0-9-]*");

    private Names() {
    }

    public static String policyInbound(PolicyId id) {
        return limited("cali-pi-", policyKey(id), RestoreTransaction.MAX_CHAIN_NAME);
    }

    public static String policyOutbound(PolicyId id) {
        return limited("cali-po-", policyKey(id), RestoreTransaction.MAX_CHAIN_NAME);
    }

    public static String profileInbound(String profile) {
        return limited("cali-pri-", profile, RestoreTransaction.MAX_CHAIN_NAME);
    }

    public static String profileOutbound(String profile) {
        return limited("cali-pro-", profile, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Traffic towards the workload (its ingress policy). */
    public static String toWorkload(String iface) {
        return limited("cali-tw-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Traffic from the workload (its egress policy). */
    public static String fromWorkload(String iface) {
        return limited("cali-fw-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Traffic from the host out of a host endpoint's interface (its egress policy). */
    public static String toHostEndpoint(String iface) {
        return limited("cali-th-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Traffic into the host from a host endpoint's interface (its ingress policy). */
    public static String fromHostEndpoint(String iface) {
        return limited("cali-fh-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Forwarded traffic into the host through a host endpoint's interface (its applyOnForward ingress). */
    public static String fromHostEndpointForward(String iface) {
        return limited("cali-fhfw-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Sets the endpoint mark of traffic from {@code iface} (kube-proxy in IPVS mode). */
    public static String setEndpointMark(String iface) {
        return limited("cali-sm-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** Forwarded traffic out of a host endpoint's interface (its applyOnForward egress). */
    public static String toHostEndpointForward(String iface) {
        return limited("cali-thfw-", iface, RestoreTransaction.MAX_CHAIN_NAME);
    }

    /** {@return the set-name prefix of a family}: {@code cali40} or {@code cali60} */
    public static String ipSetPrefix(IpFamily family) {
        return family == IpFamily.V6 ? IPSET_V6_PREFIX : IPSET_V4_PREFIX;
    }

    /**
     * The kernel name of a calculation-graph IP set: always hashed, since graph IDs (selector
     * hashes, named-port keys) are longer than the 31 characters ipset allows.
     */
    public static String ipSetV4(String setId) {
        return ipSet(IpFamily.V4, setId);
    }

    /**
     * The kernel name of an IP set in one family: {@code cali40}/{@code cali60} and the hash of
     * the ID; a driver's own set with a short plain ID (e.g. {@code all-ipam-pools}) keeps it.
     */
    public static String ipSet(IpFamily family, String setId) {
        String prefix = family == IpFamily.V6 ? IPSET_V6_PREFIX : IPSET_V4_PREFIX;
        int room = IpsetTransaction.MAX_NAME - prefix.length();
        if (setId.length() < room && READABLE_SET_ID.matcher(setId).matches()) {
            return prefix + setId;
        }
        return prefix + hash(setId).substring(0, room);
    }

    /** Sets the driver makes itself for a rule's list of several nets ({@code -s} takes one). */
    public static String netsSet(IpFamily family, java.util.List<String> sortedNets) {
        return ipSet(family, "nets:" + String.join(",", sortedNets));
    }

    /** {@code tier/name} for global policies, {@code tier/namespace/name} for namespaced ones. */
    public static String policyKey(PolicyId id) {
        return id.tier() + "/" + id.sortName();
    }

    /**
     * {@code prefix + suffix} when it fits in {@code max}; otherwise {@code prefix + "_" + } as
     * much of the URL-safe base64 SHA-256 of {@code suffix} as fits (Calico's rule). A suffix that
     * fits exactly but starts with {@code _} is hashed too, so it cannot collide with a hashed name.
     */
    public static String limited(String prefix, String suffix, int max) {
        int total = prefix.length() + suffix.length();
        if (total < max || (total == max && !suffix.startsWith("_"))) {
            return prefix + suffix;
        }
        return prefix + "_" + hash(suffix).substring(0, max - prefix.length() - 1);
    }

    private static String hash(String s) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK must provide SHA-256", e);
        }
    }
}
