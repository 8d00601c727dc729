package calico.felix.dataplane.rules;

import calico.api.model.FelixConfigurationSpec.ProtoPort;
import calico.felix.calc.FelixSettings;
import java.util.List;

/**
 * The FelixConfiguration settings that change what the rules mean, resolved from a
 * {@code ConfigUpdate}. Backend-specific hooking ({@link #appendMode}) is here too so both
 * drivers read one parsed copy; only the iptables driver uses it.
 *
 * @param endpointToHostAction what happens to workload-to-host traffic after the workload's egress policy
 * @param allowReturn          {@code iptablesFilterAllowAction: Return}: our "accepted" verdicts return to
 *                             the kernel chain instead of accepting, so rules after ours still apply
 * @param failsafeIn           inbound failsafe ports (host endpoints never block them)
 * @param failsafeOut          outbound failsafe ports
 * @param appendMode           {@code chainInsertMode: Append}: our hook jump goes last in the kernel chain
 * @param ipv6Support          whether the IPv6 dataplane is programmed at all
 * @param denyReject           {@code iptablesFilterDenyAction: Reject}: filter-table denials refuse (ICMP
 *                             unreachable / TCP reset) instead of dropping silently
 * @param nftablesAllowReturn  {@code nftablesFilterAllowAction: Return}, what {@link #forNftables()} uses
 * @param nftablesDenyReject   {@code nftablesFilterDenyAction: Reject}, what {@link #forNftables()} uses
 * @param flowLogs             flow logs are on ({@link FelixSettings#flowLogsEnabled()}): every policy verdict
 *                             logs to NFLOG first
 * @param natOutgoing          natOutgoing's exclusions and port range
 * @param nodePorts            {@code kubeNodePortRanges}, each {@code "port"} or {@code "min:max"}
 * @param kubeIpvs             kube-proxy runs in IPVS mode (felix found {@code kube-ipvs0} when it started): filter
 *                             INPUT and OUTPUT police traffic to NodePorts and services as forwarded traffic
 * @param egressAtPrerouting   the nftables layout: a workload's egress policy is judged once, at prerouting after
 *                             DNAT, and FORWARD and INPUT read the outcome from the marks (felix-service/design/rules.md
 *                             §2b); iptables has no hook there, so only {@link #forNftables()} sets it. Ignored
 *                             under {@code kubeIpvs}, whose OUTPUT judges a workload's egress again
 */
public record RuleSettings(EndpointToHostAction endpointToHostAction, boolean allowReturn, List<ProtoPort> failsafeIn,
                           List<ProtoPort> failsafeOut, boolean appendMode, boolean ipv6Support, boolean denyReject,
                           boolean nftablesAllowReturn, boolean nftablesDenyReject,
                           boolean flowLogs, NatOutgoing natOutgoing, List<String> nodePorts, boolean kubeIpvs,
                           boolean egressAtPrerouting) {

    /** {@code defaultEndpointToHostAction}. */
    public enum EndpointToHostAction { DROP, RETURN, ACCEPT }

    public RuleSettings {
        failsafeIn = List.copyOf(failsafeIn);
        failsafeOut = List.copyOf(failsafeOut);
        java.util.Objects.requireNonNull(natOutgoing, "natOutgoing");
        nodePorts = List.copyOf(nodePorts);
    }

    /** Calico's defaults: Drop, Accept, the default failsafe ports, Insert, IPv6 on. */
    public static RuleSettings defaults() {
        return from(FelixSettings.defaults());
    }

    /**
     * From the effective configuration. The {@code iptables…} allow and deny actions are the
     * ones used; the nftables driver renders with {@link #forNftables()}.
     */
    public static RuleSettings from(FelixSettings s) {
        EndpointToHostAction toHost = switch (s.defaultEndpointToHostAction()) {
            case "Accept" -> EndpointToHostAction.ACCEPT;
            case "Return" -> EndpointToHostAction.RETURN;
            default -> EndpointToHostAction.DROP;
        };
        return new RuleSettings(toHost, s.iptablesFilterAllowAction().equals("Return"),
                s.failsafeInboundHostPorts(), s.failsafeOutboundHostPorts(), s.chainInsertMode().equals("Append"),
                s.ipv6Support(), s.iptablesFilterDenyAction().equals("Reject"),
                s.nftablesFilterAllowAction().equals("Return"), s.nftablesFilterDenyAction().equals("Reject"),
                s.flowLogsEnabled(), NatOutgoing.from(s),
                s.kubeNodePortRanges().stream().map(calico.api.model.Port::toString).toList(), false, false);
    }

    /** {@return these settings with the allow and deny actions of the {@code nftables…} fields} */
    public RuleSettings forNftables() {
        return withAllowReturn(nftablesAllowReturn).withDenyReject(nftablesDenyReject).withEgressAtPrerouting(true);
    }

    /** {@return these settings with a workload's egress judged at prerouting ({@code true}) or in FORWARD and INPUT} */
    public RuleSettings withEgressAtPrerouting(boolean on) {
        return new RuleSettings(endpointToHostAction, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support,
                denyReject, nftablesAllowReturn, nftablesDenyReject, flowLogs, natOutgoing, nodePorts, kubeIpvs, on);
    }

    /** {@return whether this layout judges a workload's egress at prerouting}: asked for, and not under IPVS */
    public boolean judgesEgressAtPrerouting() {
        return egressAtPrerouting && !kubeIpvs;
    }

    public RuleSettings withAllowReturn(boolean r) {
        return new RuleSettings(endpointToHostAction, r, failsafeIn, failsafeOut, appendMode, ipv6Support, denyReject,
                nftablesAllowReturn, nftablesDenyReject, flowLogs, natOutgoing, nodePorts, kubeIpvs, egressAtPrerouting);
    }

    /** {@return these settings with filter-table denials rejecting ({@code true}) or dropping} */
    public RuleSettings withDenyReject(boolean r) {
        return new RuleSettings(endpointToHostAction, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support, r,
                nftablesAllowReturn, nftablesDenyReject, flowLogs, natOutgoing, nodePorts, kubeIpvs, egressAtPrerouting);
    }

    public RuleSettings withEndpointToHostAction(EndpointToHostAction a) {
        return new RuleSettings(a, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support, denyReject,
                nftablesAllowReturn, nftablesDenyReject, flowLogs, natOutgoing, nodePorts, kubeIpvs, egressAtPrerouting);
    }

    /** {@return these settings with flow logs' NFLOG rules on or off} */
    public RuleSettings withFlowLogs(boolean on) {
        return new RuleSettings(endpointToHostAction, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support,
                denyReject, nftablesAllowReturn, nftablesDenyReject, on, natOutgoing, nodePorts, kubeIpvs, egressAtPrerouting);
    }

    /** {@return these settings with natOutgoing's exclusions and port range {@code n}} */
    public RuleSettings withNatOutgoing(NatOutgoing n) {
        return new RuleSettings(endpointToHostAction, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support,
                denyReject, nftablesAllowReturn, nftablesDenyReject, flowLogs, n, nodePorts, kubeIpvs, egressAtPrerouting);
    }

    /** {@return these settings with kube-proxy's IPVS mode detected ({@code true}) or not} */
    public RuleSettings withKubeIpvs(boolean on) {
        return new RuleSettings(endpointToHostAction, allowReturn, failsafeIn, failsafeOut, appendMode, ipv6Support,
                denyReject, nftablesAllowReturn, nftablesDenyReject, flowLogs, natOutgoing, nodePorts, on, egressAtPrerouting);
    }

    /** {@return the verdict for traffic our filter-table policy denies}: DROP, or REJECT under {@code denyReject} */
    public Target denyTarget() {
        return denyReject ? Target.REJECT : Target.DROP;
    }

    /** {@return the verdict for traffic our policy accepted}: ACCEPT, or RETURN under {@code allowReturn} */
    public Target allowTarget() {
        return allowReturn ? Target.RETURN : Target.ACCEPT;
    }
}
