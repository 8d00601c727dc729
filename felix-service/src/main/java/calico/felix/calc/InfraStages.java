package calico.felix.calc;

import java.util.Map;

/**
 * Builds and registers the infrastructure stages, for the graph factory:
 *
 * <pre>
 *   Dispatcher ──FelixConfiguration──▶ ConfigResolver ──┐
 *              ──Node──────────────▶ HostMetadataStage ─┤
 *              ──IPPool────────────▶ IpPoolStage ───────┼──▶ InfraListener (EventSequencer)
 *              ──Node──────────────▶ VtepStage ─────────┤
 *              ──WEP, Node, IPPool,
 *                IPAMBlock─────────▶ RouteCalculator ───┤
 *              ──Node──────────────▶ WireguardStage ────┤
 *              ──Node (this one)───▶ IpipTunnelStage ───┤
 *              ──BGPConfiguration──▶ ServiceCidrStage ──┘
 * </pre>
 */
public final class InfraStages {

    private InfraStages() {
    }

    public static void registerAll(Dispatcher dispatcher, String hostname, Map<String, String> environment,
                                   InfraListener out) {
        new ConfigResolver(hostname, environment, out).registerWith(dispatcher);
        new HostMetadataStage(out).registerWith(dispatcher);
        new IpPoolStage(out).registerWith(dispatcher);
        new VtepStage(out).registerWith(dispatcher);
        new RouteCalculator(hostname, out).registerWith(dispatcher);
        new WireguardStage(out).registerWith(dispatcher);
        new IpipTunnelStage(hostname, out).registerWith(dispatcher);
        new ServiceCidrStage(out).registerWith(dispatcher);
    }
}
