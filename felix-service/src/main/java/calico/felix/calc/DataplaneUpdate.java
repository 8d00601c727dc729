package calico.felix.calc;

import java.util.Map;

/**
 * What the calculation graph tells the dataplane drivers: a dataplane-neutral stream, in an
 * order the drivers can apply as they come (see {@code EventSequencer}). Drivers never see
 * datastore types.
 *
 * <p>The infrastructure variants below (config, host metadata, IP pools, routes) are fixed
 * contracts; the policy, IP set and endpoint variants are defined beside them by the graph.
 */
public sealed interface DataplaneUpdate {

    /**
     * One method per variant: dispatch over the stream is {@code u.accept(visitor)}, and a new
     * variant added here fails to compile in every visitor until it is handled there (Java 17 has
     * no exhaustive pattern {@code switch}; this is its equivalent, with no default branch).
     */
    interface Visitor<R> {
        R configUpdate(ConfigUpdate u);

        R hostMetadataUpdate(HostMetadataUpdate u);

        R hostMetadataRemove(HostMetadataRemove u);

        R ipPoolUpdate(IpPoolUpdate u);

        R ipPoolRemove(IpPoolRemove u);

        R routeUpdate(RouteUpdate u);

        R routeRemove(RouteRemove u);

        R inSync(InSync u);

        R ipSetUpdate(IpSetUpdate u);

        R ipSetDeltaUpdate(IpSetDeltaUpdate u);

        R ipSetRemove(IpSetRemove u);

        R activePolicyUpdate(ActivePolicyUpdate u);

        R activePolicyRemove(ActivePolicyRemove u);

        R activeProfileUpdate(ActiveProfileUpdate u);

        R activeProfileRemove(ActiveProfileRemove u);

        R workloadEndpointUpdate(WorkloadEndpointUpdate u);

        R workloadEndpointRemove(WorkloadEndpointRemove u);

        R hostEndpointUpdate(HostEndpointUpdate u);

        R hostEndpointRemove(HostEndpointRemove u);

        R flowLookupUpdate(FlowLookupUpdate u);

        R serviceLookupUpdate(ServiceLookupUpdate u);

        R flowLookupRemove(FlowLookupRemove u);

        R wireguardEndpointUpdate(WireguardEndpointUpdate u);

        R wireguardEndpointRemove(WireguardEndpointRemove u);

        R wireguardEndpointV6Update(WireguardEndpointV6Update u);

        R wireguardEndpointV6Remove(WireguardEndpointV6Remove u);
        R vtepUpdate(VtepUpdate u);

        R vtepRemove(VtepRemove u);

        R ipipTunnelAddressUpdate(IpipTunnelAddressUpdate u);

        R ipipTunnelAddressRemove(IpipTunnelAddressRemove u);

        R serviceCidrsUpdate(ServiceCidrsUpdate u);
    }

    /**
     * The Kubernetes service address ranges BGPConfiguration {@code default} advertises ({@code serviceClusterIPs},
     * {@code serviceExternalIPs}, {@code serviceLoadBalancerIPs}), normalised and sorted; empty when none (or no
     * such resource). What {@code serviceLoopPrevention} guards: forwarded traffic to them that kube-proxy did not
     * DNAT is dropped or rejected. One value for the cluster, replaced as a whole (no remove).
     */
    record ServiceCidrsUpdate(java.util.List<String> cidrs) implements DataplaneUpdate {
        public ServiceCidrsUpdate {
            cidrs = java.util.List.copyOf(cidrs);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.serviceCidrsUpdate(this);
        }
    }

    /** {@return what {@code v} makes of this update}: calls the visitor's method for this variant. */
    <R> R accept(Visitor<R> v);

    /**
     * The effective Felix configuration, typed ({@link FelixSettings}), resolved from Calico's
     * defaults, the global {@code default} resource, the node's {@code node.<name>} resource,
     * then {@code FELIX_*} environment variables (highest). Sent whole on every change.
     */
    record ConfigUpdate(FelixSettings settings) implements DataplaneUpdate {
        public ConfigUpdate {
            java.util.Objects.requireNonNull(settings, "settings");
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.configUpdate(this);
        }
    }

    /** Another (or this) node's addresses, from its Node resource; {@code null} when it has none. */
    record HostMetadataUpdate(String hostname, String ipv4Address, String ipv6Address,
                              Map<String, String> labels) implements DataplaneUpdate {
        public HostMetadataUpdate {
            labels = labels == null ? Map.of() : Map.copyOf(labels);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostMetadataUpdate(this);
        }
    }

    record HostMetadataRemove(String hostname) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostMetadataRemove(this);
        }
    }

    /** An IP pool's settings, keyed by the pool's name. Modes are Calico's Never/Always/CrossSubnet. */
    record IpPoolUpdate(String name, String cidr, boolean natOutgoing, String ipipMode, String vxlanMode,
                        boolean disabled) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipPoolUpdate(this);
        }
    }

    record IpPoolRemove(String name) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipPoolRemove(this);
        }
    }

    /** What a route leads to. */
    enum RouteType {
        /** A workload on this node: {@code dst} via its interface. */
        LOCAL_WORKLOAD,
        /** A workload on another node: {@code dst} via that node. */
        REMOTE_WORKLOAD,
        /** Another node's own address (for encapsulation next hops). */
        REMOTE_HOST,
        /** This node's own address. */
        LOCAL_HOST,
        /** An IPAM block affine to this node ({@code routeSource: CalicoIPAM}): blackholed, its workloads have /32s. */
        LOCAL_BLOCK,
        /** An IPAM block affine to another node: {@code dst} via that node ({@code routeSource: CalicoIPAM}). */
        REMOTE_BLOCK
    }

    /**
     * A route the dataplane may program, keyed by {@code dst} (a CIDR).
     *
     * @param dstNode       the node that owns {@code dst}
     * @param dstNodeIp     that node's IPv4 (or IPv6) address, when known
     * @param interfaceName for local workloads, the host-side interface
     * @param poolName      the IP pool containing {@code dst}, or {@code null}
     * @param natOutgoing   that pool's natOutgoing
     */
    record RouteUpdate(String dst, RouteType type, String dstNode, String dstNodeIp, String interfaceName,
                       String poolName, boolean natOutgoing) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.routeUpdate(this);
        }
    }

    record RouteRemove(String dst) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.routeRemove(this);
        }
    }

    /**
     * A node's WireGuard identity, from its Node resource (Calico's {@code WireguardEndpointUpdate}):
     * sent for every node, this one included, that has a public key or an interface address.
     *
     * @param publicKey            {@code status.wireguardPublicKey} (base64), {@code null} when none
     *                             (or not a 32-byte key: logged, never guessed)
     * @param interfaceIpv4Address {@code spec.wireguard.interfaceIPv4Address} (bare), {@code null} when none
     */
    record WireguardEndpointUpdate(String hostname, String publicKey, String interfaceIpv4Address)
            implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.wireguardEndpointUpdate(this);
        }
    }

    record WireguardEndpointRemove(String hostname) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.wireguardEndpointRemove(this);
        }
    }

    /**
     * A node's IPv6 WireGuard identity (Calico's {@code WireguardEndpointV6Update}): sent for every
     * node, this one included, that has an IPv6 public key or an IPv6 WireGuard interface address.
     *
     * @param publicKeyV6          {@code status.wireguardPublicKeyV6} (base64), {@code null} when none
     *                             (or not a 32-byte key: logged, never guessed)
     * @param interfaceIpv6Address {@code spec.wireguard.interfaceIPv6Address} (bare), {@code null} when none
     */
    record WireguardEndpointV6Update(String hostname, String publicKeyV6, String interfaceIpv6Address)
            implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.wireguardEndpointV6Update(this);
        }
    }

    record WireguardEndpointV6Remove(String hostname) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.wireguardEndpointV6Remove(this);
        }
    }

    /**
     * A node's VXLAN tunnel endpoint (Calico's {@code VXLANTunnelEndpointUpdate}), keyed by node
     * name, this node's own included; sent once the node has a tunnel address and an address of the
     * same family (the parent device's). IPv4 and IPv6 halves are each all set or all null.
     *
     * @param mac              the VTEP's MAC for IPv4: the Node's {@code vxlanTunnelMACAddr}, else
     *                         derived from the node name as Calico's felix derives it
     * @param ipv4Addr         the Node's {@code ipv4VXLANTunnelAddr} (bare)
     * @param parentDeviceIpv4 the node's IPv4 address (bare): where encapsulated packets go
     * @param macV6            likewise for IPv6 ({@code vxlanTunnelMACAddrV6}, else derived)
     */
    record VtepUpdate(String node, String mac, String ipv4Addr, String parentDeviceIpv4, String macV6,
                      String ipv6Addr, String parentDeviceIpv6) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.vtepUpdate(this);
        }
    }

    record VtepRemove(String node) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.vtepRemove(this);
        }
    }

    /**
     * This node's IPIP tunnel address, which felix puts on {@code tunl0}: the Node's
     * {@code spec.bgp.ipv4IPIPTunnelAddr} (bare), as Calico's calculation graph turns it into the
     * per-host {@code IpInIpTunnelAddr} of its own host only. Other nodes' are never sent (IPIP
     * routes go via a node's own address).
     */
    record IpipTunnelAddressUpdate(String node, String address) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipipTunnelAddressUpdate(this);
        }
    }

    /** This node's IPIP tunnel address went (its Node has none, or a valid one no more). */
    record IpipTunnelAddressRemove(String node) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipipTunnelAddressRemove(this);
        }
    }

    /** The initial snapshot has been sent in full: the dataplane may now remove what it did not hear about. */
    record InSync() implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.inSync(this);
        }
    }

    // ---- Graph variants: IP sets, active policies and profiles, local endpoints. ----

    /** Creates an IP set or replaces its whole membership. */
    record IpSetUpdate(String id, IpSetType type, java.util.Set<IpSetMember> members) implements DataplaneUpdate {
        public IpSetUpdate {
            members = java.util.Set.copyOf(members);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipSetUpdate(this);
        }
    }

    /** Changes the membership of an IP set the dataplane already has. */
    record IpSetDeltaUpdate(String id, java.util.Set<IpSetMember> added, java.util.Set<IpSetMember> removed)
            implements DataplaneUpdate {
        public IpSetDeltaUpdate {
            added = java.util.Set.copyOf(added);
            removed = java.util.Set.copyOf(removed);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipSetDeltaUpdate(this);
        }
    }

    /** The IP set is no longer referenced by any active rule. */
    record IpSetRemove(String id) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.ipSetRemove(this);
        }
    }

    /** A policy that selects at least one local endpoint, compiled (create or replace). */
    record ActivePolicyUpdate(PolicyId id, CompiledPolicy policy) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.activePolicyUpdate(this);
        }
    }

    record ActivePolicyRemove(PolicyId id) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.activePolicyRemove(this);
        }
    }

    /** A profile used by at least one local endpoint, compiled (create or replace). */
    record ActiveProfileUpdate(String name, CompiledPolicy profile) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.activeProfileUpdate(this);
        }
    }

    record ActiveProfileRemove(String name) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.activeProfileRemove(this);
        }
    }

    /**
     * A workload endpoint on this node (create or replace).
     *
     * @param id          {@code <namespace>/<name>} of the WorkloadEndpoint
     * @param ingress     tiers that apply to traffic towards the endpoint, in evaluation order
     * @param egress      tiers that apply to traffic from the endpoint, in evaluation order
     * @param profileIds  existing profiles, in the endpoint's order (missing ones are left out: fail closed)
     * @param identity    how flow logs name the endpoint (labels, generate-name); no rule depends on it
     * @param allowSpoofedSourcePrefixes source prefixes the endpoint may send from besides its own addresses
     *                    (the pod annotation {@code cni.projectcalico.org/allowedSourcePrefixes}); honoured only
     *                    under {@code workloadSourceSpoofing: Any}
     * @param workloadKey the endpoint as Calico's felix keys it (orchestrator, workload, endpoint): what names its
     *                    status file; null when not known
     */
    record WorkloadEndpointUpdate(String id, String interfaceName, String mac, java.util.List<String> ipv4Nets,
                                  java.util.List<String> ipv6Nets, java.util.List<String> profileIds,
                                  java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress,
                                  EndpointIdentity identity, java.util.List<FloatingIp> floatingIps,
                                  java.util.List<String> allowSpoofedSourcePrefixes, WorkloadKey workloadKey)
            implements DataplaneUpdate {
        public WorkloadEndpointUpdate {
            allowSpoofedSourcePrefixes = allowSpoofedSourcePrefixes == null ? java.util.List.of()
                    : java.util.List.copyOf(allowSpoofedSourcePrefixes);
            ipv4Nets = java.util.List.copyOf(ipv4Nets);
            ipv6Nets = java.util.List.copyOf(ipv6Nets);
            profileIds = java.util.List.copyOf(profileIds);
            ingress = java.util.List.copyOf(ingress);
            egress = java.util.List.copyOf(egress);
            identity = identity == null ? EndpointIdentity.NONE : identity;
            floatingIps = floatingIps == null ? java.util.List.of() : java.util.List.copyOf(floatingIps);
        }

        /** An endpoint whose orchestrator's key is not known (tests): {@link #workloadKey()} null. */
        public WorkloadEndpointUpdate(String id, String interfaceName, String mac, java.util.List<String> ipv4Nets,
                                      java.util.List<String> ipv6Nets, java.util.List<String> profileIds,
                                      java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress,
                                      EndpointIdentity identity, java.util.List<FloatingIp> floatingIps,
                                      java.util.List<String> allowSpoofedSourcePrefixes) {
            this(id, interfaceName, mac, ipv4Nets, ipv6Nets, profileIds, ingress, egress, identity, floatingIps,
                    allowSpoofedSourcePrefixes, null);
        }

        /** An endpoint that may send only from its own addresses (no {@code allowSpoofedSourcePrefixes}). */
        public WorkloadEndpointUpdate(String id, String interfaceName, String mac, java.util.List<String> ipv4Nets,
                                      java.util.List<String> ipv6Nets, java.util.List<String> profileIds,
                                      java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress,
                                      EndpointIdentity identity, java.util.List<FloatingIp> floatingIps) {
            this(id, interfaceName, mac, ipv4Nets, ipv6Nets, profileIds, ingress, egress, identity, floatingIps,
                    java.util.List.of());
        }

        /** An endpoint without floating IPs. */
        public WorkloadEndpointUpdate(String id, String interfaceName, String mac, java.util.List<String> ipv4Nets,
                                      java.util.List<String> ipv6Nets, java.util.List<String> profileIds,
                                      java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress,
                                      EndpointIdentity identity) {
            this(id, interfaceName, mac, ipv4Nets, ipv6Nets, profileIds, ingress, egress, identity,
                    java.util.List.of());
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.workloadEndpointUpdate(this);
        }

        /** An endpoint whose labels and generate-name are not known (tests, benchmarks). */
        public WorkloadEndpointUpdate(String id, String interfaceName, String mac, java.util.List<String> ipv4Nets,
                                      java.util.List<String> ipv6Nets, java.util.List<String> profileIds,
                                      java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress) {
            this(id, interfaceName, mac, ipv4Nets, ipv6Nets, profileIds, ingress, egress, EndpointIdentity.NONE);
        }
    }

    /**
     * A workload endpoint as Calico's felix keys it: {@code orchestrator} (e.g. {@code k8s}), {@code workload}
     * ({@code <namespace>/<pod>} for Kubernetes, else {@code <namespace>/<workload>}) and {@code endpoint}
     * (e.g. {@code eth0}).
     */
    record WorkloadKey(String orchestrator, String workload, String endpoint) {
        public WorkloadKey {
            orchestrator = orchestrator == null ? "" : orchestrator;
            workload = workload == null ? "" : workload;
            endpoint = endpoint == null ? "" : endpoint;
        }

        /**
         * {@return the name of this endpoint's status file} as Calico's CNI plugin looks for it: the three fields
         * path-escaped (Go's {@code url.PathEscape}), joined by spaces.
         */
        public String statusFileName() {
            return pathEscape(orchestrator) + " " + pathEscape(workload) + " " + pathEscape(endpoint);
        }

        /** Go's url.PathEscape: every byte but unreserved characters and {@code $&+,:;=@} as %XX (upper case). */
        static String pathEscape(String s) {
            StringBuilder out = new StringBuilder();
            for (byte b : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                char c = (char) (b & 0xff);
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                        || "-_.~$&+,:;=@".indexOf(c) >= 0) {
                    out.append(c);
                } else {
                    out.append('%').append(String.format("%02X", b & 0xff));
                }
            }
            return out.toString();
        }
    }

    /**
     * One of a workload's {@code ipNATs}: traffic to {@code external} is DNAT'd to {@code internal}
     * (one of the workload's own addresses), when FelixConfiguration {@code floatingIPs} is Enabled.
     * Addresses without prefix length, both of one IP version.
     */
    record FloatingIp(String internal, String external) {
        public FloatingIp {
            java.util.Objects.requireNonNull(internal, "internal");
            java.util.Objects.requireNonNull(external, "external");
        }
    }

    /**
     * What flow logs report about a workload besides its name: its labels, and the generate-name
     * of its pod, which Calico's flow logs use as the aggregated name ({@code <generateName>*}).
     */
    record EndpointIdentity(java.util.Map<String, String> labels, String generateName) {
        public static final EndpointIdentity NONE = new EndpointIdentity(java.util.Map.of(), "");

        public EndpointIdentity {
            labels = labels == null ? java.util.Map.of() : java.util.Map.copyOf(labels);
            generateName = generateName == null ? "" : generateName;
        }
    }

    record WorkloadEndpointRemove(String id) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.workloadEndpointRemove(this);
        }
    }

    /** A host endpoint on this node (create or replace); fields as for workload endpoints. */
    /**
     * A local host endpoint. {@code ingress}/{@code egress}: its normal policies (neither
     * doNotTrack nor preDNAT) for the host's own traffic; {@code untrackedIngress}/{@code
     * untrackedEgress}: doNotTrack policies; {@code preDnatIngress}: preDNAT policies (ingress
     * only); {@code forwardIngress}/{@code forwardEgress}: the normal policies with
     * applyOnForward, which also police traffic forwarded through the endpoint.
     */
    record HostEndpointUpdate(String id, String interfaceName, java.util.List<String> expectedIpv4,
                              java.util.List<String> expectedIpv6, java.util.List<String> profileIds,
                              java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress,
                              java.util.List<TierPolicies> untrackedIngress, java.util.List<TierPolicies> untrackedEgress,
                              java.util.List<TierPolicies> preDnatIngress, java.util.List<TierPolicies> forwardIngress,
                              java.util.List<TierPolicies> forwardEgress)
            implements DataplaneUpdate {
        public HostEndpointUpdate {
            expectedIpv4 = java.util.List.copyOf(expectedIpv4);
            expectedIpv6 = java.util.List.copyOf(expectedIpv6);
            profileIds = java.util.List.copyOf(profileIds);
            ingress = java.util.List.copyOf(ingress);
            egress = java.util.List.copyOf(egress);
            untrackedIngress = java.util.List.copyOf(untrackedIngress);
            untrackedEgress = java.util.List.copyOf(untrackedEgress);
            preDnatIngress = java.util.List.copyOf(preDnatIngress);
            forwardIngress = java.util.List.copyOf(forwardIngress);
            forwardEgress = java.util.List.copyOf(forwardEgress);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostEndpointUpdate(this);
        }

        /** A host endpoint with normal policies only. */
        public HostEndpointUpdate(String id, String interfaceName, java.util.List<String> expectedIpv4,
                                  java.util.List<String> expectedIpv6, java.util.List<String> profileIds,
                                  java.util.List<TierPolicies> ingress, java.util.List<TierPolicies> egress) {
            this(id, interfaceName, expectedIpv4, expectedIpv6, profileIds, ingress, egress, java.util.List.of(),
                    java.util.List.of(), java.util.List.of(), java.util.List.of(), java.util.List.of());
        }
    }

    record HostEndpointRemove(String id) implements DataplaneUpdate {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.hostEndpointRemove(this);
        }
    }

    // ---- Flow-log lookups: never programmed, read by flow logs only. ----

    /**
     * Marks the variants that describe no dataplane state, only what flow logs need to name the
     * far end of a flow; drivers never see them ({@code ProgrammedState} strips them). Emitted only
     * while {@code flowLogsGoldmaneServer} is set.
     */
    sealed interface FlowLookup extends DataplaneUpdate permits FlowLookupUpdate, ServiceLookupUpdate, FlowLookupRemove {
        /** {@return {@code <Kind>/<namespace>/<name>} or {@code <Kind>/<name>}}: what a later update or remove replaces */
        String key();
    }

    /** What a flow-log lookup names. */
    enum FlowLookupType {
        /** A workload endpoint on another node (local ones come as {@link WorkloadEndpointUpdate}). */
        REMOTE_WORKLOAD,
        /** A host endpoint, on any node (a local one carries its policies in {@link HostEndpointUpdate}). */
        HOST_ENDPOINT,
        /** A NetworkSet (namespaced) or GlobalNetworkSet (namespace empty). */
        NETWORK_SET
    }

    /**
     * The identity of an endpoint or network set by its addresses, for flow logs (create or replace).
     *
     * @param key          {@code <Kind>/<namespace>/<name>} or {@code <Kind>/<name>}
     * @param name         the resource's name
     * @param namespace    its namespace; empty for cluster-wide resources
     * @param generateName a workload's pod generate-name (empty otherwise or when none)
     * @param labels       the resource's own labels
     * @param nets         its addresses or CIDRs (workload ipNetworks, host expectedIPs, set nets)
     */
    record FlowLookupUpdate(String key, FlowLookupType type, String name, String namespace, String generateName,
                            Map<String, String> labels, java.util.List<String> nets) implements FlowLookup {
        public FlowLookupUpdate {
            namespace = namespace == null ? "" : namespace;
            generateName = generateName == null ? "" : generateName;
            labels = labels == null ? Map.of() : Map.copyOf(labels);
            nets = java.util.List.copyOf(nets);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.flowLookupUpdate(this);
        }
    }

    /**
     * A Kubernetes Service by the addresses and ports a client dials (create or replace), so flow
     * logs can name the service behind a DNAT'd connection.
     *
     * @param key       {@code KubernetesService/<namespace>/<name>}
     * @param ips       cluster IPs, external IPs and load-balancer ingress IPs
     * @param ports     the service's ports (each with the IP protocol number it is open for)
     */
    record ServiceLookupUpdate(String key, String namespace, String name, java.util.List<String> ips,
                               java.util.List<ServicePortLookup> ports) implements FlowLookup {
        public ServiceLookupUpdate {
            ips = java.util.List.copyOf(ips);
            ports = java.util.List.copyOf(ports);
        }

        @Override
        public <R> R accept(Visitor<R> v) {
            return v.serviceLookupUpdate(this);
        }
    }

    /**
     * One port of a {@link ServiceLookupUpdate}.
     *
     * @param name     the port's name; empty for a service's single unnamed port
     * @param protocol IANA protocol number (6 TCP, 17 UDP, 132 SCTP)
     * @param port     the port on the service's addresses
     * @param nodePort the port on every node's addresses; 0 for none
     */
    record ServicePortLookup(String name, int protocol, int port, int nodePort) {
    }

    record FlowLookupRemove(String key) implements FlowLookup {
        @Override
        public <R> R accept(Visitor<R> v) {
            return v.flowLookupRemove(this);
        }
    }
}
