package calico.confd.render;

import calico.api.model.BGPConfiguration;
import calico.api.model.BGPConfigurationSpec;
import calico.api.model.BGPFilter;
import calico.api.model.BGPPeer;
import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPPool;
import calico.api.model.Node;
import calico.api.net.Cidr;
import calico.confd.model.BgpView;
import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Renders one BIRD 2 configuration (IPv4 and IPv6) for one node from a {@link BgpView}. The
 * decisions are made here and in {@link PeerPlanner}; the layout of the file is the mustache
 * template {@code templates/bird.cfg.mustache}. Pure: same view, same text.
 */
public final class BirdConfigBuilder {

    private static final String TEMPLATE = "templates/bird.cfg.mustache";

    private final Mustache template;
    private final SecretSource secrets;

    public BirdConfigBuilder(SecretSource secrets) {
        this.secrets = secrets;
        // BIRD is not HTML: print values exactly as given (they are checked before they get here).
        DefaultMustacheFactory factory = new DefaultMustacheFactory() {
            @Override
            public void encode(String value, Writer writer) {
                try {
                    writer.write(value);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
        this.template = factory.compile(new InputStreamReader(
                BirdConfigBuilder.class.getClassLoader().getResourceAsStream(TEMPLATE), StandardCharsets.UTF_8),
                TEMPLATE);
    }

    /**
     * Renders {@code nodeName}'s configuration.
     *
     * @param routerId {@code CALICO_ROUTER_ID}: an IPv4 address, {@code hash}, or empty for the node's IPv4
     * @throws RenderException when the node is missing or has no BGP address
     */
    public Rendered render(BgpView view, String nodeName, String routerId) {
        BGPConfigurationSpec cfg = effectiveConfig(view, nodeName);
        long defaultAs = cfg.asNumber() == null ? LocalNode.DEFAULT_AS : cfg.asNumber().value();
        Node node = view.nodes().get(nodeName);
        if (node == null) {
            throw new RenderException("Node " + nodeName + ": not in the datastore (NODENAME names this node)");
        }
        LocalNode local = LocalNode.of(node, defaultAs).orElseThrow(() -> new RenderException("Node " + nodeName
                + ": spec.bgp has no ipv4Address or ipv6Address, so BIRD has no router address"));
        if (local.asNumber() < 1 || local.asNumber() > 0xFFFF_FFFFL) {
            throw new RenderException("Node " + nodeName + ": spec.bgp.asNumber " + local.asNumber()
                    + " is not an AS number (1-4294967295)");
        }
        List<Skipped> skipped = new ArrayList<>();
        List<FilterRenderer.Function> functions = new ArrayList<>();
        // Peers that name a filter that failed to render must not reference its functions.
        Map<String, BGPFilter> goodFilters = new TreeMap<>();
        for (BGPFilter f : view.filters().values()) {
            try {
                functions.addAll(FilterRenderer.render(f));
                goodFilters.put(f.metadata().name(), f);
            } catch (IllegalArgumentException e) {
                skipped.add(new Skipped("BGPFilter " + f.metadata().name(), e.getMessage()));
            }
        }
        List<BGPPeer> peers = List.copyOf(view.peers().values());
        PeerPlanner planner = new PeerPlanner(local, view.nodes(), cfg, goodFilters, secrets, defaultAs,
                List.copyOf(view.workloads().values())).plan(peers);
        skipped.addAll(planner.skipped());

        Exports v4 = exports(view, local, cfg, 4, skipped);
        Exports v6 = exports(view, local, cfg, 6, skipped);
        Integer listenPort = cfg.listenPort() == null || cfg.listenPort() == 179 ? null : cfg.listenPort();
        boolean strictBind = cfg.bindMode() == BGPConfigurationSpec.BindMode.NodeIP;
        List<SessionView> sessions = planner.sessions().stream()
                .map(s -> SessionView.of(s, listenPort, strictBind)).toList();
        TemplateModel model = new TemplateModel(nodeName, routerId(local, routerId), logClasses(cfg.logSeverityScreen()),
                debug(cfg.logSeverityScreen()), functions, v4, v6, sessions,
                directInterfaces(cfg.ignoredInterfaces(), configSource(view, nodeName), skipped));
        StringWriter out = new StringWriter();
        template.execute(out, model);
        return new Rendered(out.toString(), planner.sessions(), skipped);
    }

    /**
     * The direct protocol's interface patterns: {@code ignoredInterfaces} excluded first, then
     * Calico's fixed exclusions ({@code cali*} workload veths, {@code kube-ipvs*}), then the rest.
     */
    static String directInterfaces(List<String> ignored, String source, List<Skipped> skipped) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < ignored.size(); i++) {
            String name = ignored.get(i);
            if (name == null || name.isEmpty() || name.chars().anyMatch(c -> c <= 0x20 || c == '"' || c == '\\'
                    || c == 0x7f)) {
                skipped.add(new Skipped(source, "spec.ignoredInterfaces[" + i + "]: \"" + name
                        + "\" is not an interface name or pattern (empty, or holds a space, quote, backslash or "
                        + "control character)"));
                continue;
            }
            sb.append("-\"").append(name).append("\", ");
        }
        return sb.append("-\"cali*\", -\"kube-ipvs*\", \"*\"").toString();
    }

    /** {@return which BGPConfiguration {@code ignoredInterfaces} came from}, as {@link #effectiveConfig} picks it */
    private static String configSource(BgpView view, String nodeName) {
        BGPConfigurationSpec n = spec(view.configs().get("node." + nodeName));
        return n.ignoredInterfaces().isEmpty() ? "BGPConfiguration default" : "BGPConfiguration node." + nodeName;
    }

    /** Calico's rule: {@code node.<name>} overrides {@code default} field by field. */
    public static BGPConfigurationSpec effectiveConfig(BgpView view, String nodeName) {
        BGPConfigurationSpec d = spec(view.configs().get("default"));
        BGPConfigurationSpec n = spec(view.configs().get("node." + nodeName));
        return new BGPConfigurationSpec(
                or(n.logSeverityScreen(), d.logSeverityScreen()),
                d.nodeToNodeMeshEnabled(),
                d.asNumber(),
                d.serviceLoadBalancerIPs(),
                d.serviceExternalIPs(),
                d.serviceClusterIPs(),
                d.communities(),
                d.prefixAdvertisements(),
                or(n.listenPort(), d.listenPort()),
                d.nodeMeshPassword(),
                d.nodeMeshMaxRestartTime(),
                or(n.bindMode(), d.bindMode()),
                n.ignoredInterfaces().isEmpty() ? d.ignoredInterfaces() : n.ignoredInterfaces(),
                or(n.localWorkloadPeeringIPV4(), d.localWorkloadPeeringIPV4()),
                or(n.localWorkloadPeeringIPV6(), d.localWorkloadPeeringIPV6()),
                d.serviceLoadBalancerAggregation());
    }

    private static BGPConfigurationSpec spec(BGPConfiguration c) {
        return c == null || c.spec() == null ? new BGPConfigurationSpec(null, null, null, null, null, null, null, null,
                null, null, null, null, null, null, null, null) : c.spec();
    }

    private static <T> T or(T a, T b) {
        return a != null ? a : b;
    }

    /** What one family exports, blackholes and tags: the template's per-family lines. */
    record Exports(List<String> blocks, List<String> services, List<String> exportLines, List<String> communityLines) {
    }

    private static Exports exports(BgpView view, LocalNode local, BGPConfigurationSpec cfg, int family,
                                   List<Skipped> skipped) {
        List<String> exportLines = new ArrayList<>();
        List<String> poolAccepts = new ArrayList<>();
        for (IPPool pool : view.pools().values()) {
            Optional<Cidr> cidr = pool.spec() == null ? Optional.empty() : Cidr.tryParse(pool.spec().cidr());
            if (cidr.isEmpty()) {
                if (family == 4) {
                    skipped.add(new Skipped("IPPool " + pool.metadata().name(), "spec.cidr: not a CIDR"));
                }
                continue;
            }
            if (cidr.get().version() != family) {
                continue;
            }
            String net = cidr.get().network().toString();
            if (Boolean.TRUE.equals(pool.spec().disabled()) || Boolean.TRUE.equals(pool.spec().disableBGPExport())) {
                exportLines.add("if ( net ~ [ " + net + "+ ] ) then { reject; }  # IPPool " + pool.metadata().name()
                        + (Boolean.TRUE.equals(pool.spec().disabled()) ? " (disabled)" : " (disableBGPExport)"));
            } else {
                poolAccepts.add("if ( net ~ [ " + net + "+ ] ) then { accept; }  # IPPool " + pool.metadata().name());
            }
        }
        // This node's blocks: advertise the block, not the /32s of its workloads inside it.
        List<String> blocks = new ArrayList<>();
        for (BlockAffinity a : view.affinities().values()) {
            BlockAffinitySpec s = a.spec();
            if (s == null || !local.name().equals(s.node()) || !BlockAffinitySpec.CONFIRMED.equals(s.state())
                    || "true".equals(s.deleted())) {
                continue;
            }
            Optional<Cidr> cidr = Cidr.tryParse(s.cidr());
            if (cidr.isEmpty() || cidr.get().version() != family) {
                continue;
            }
            String net = cidr.get().network().toString();
            blocks.add(net);
            exportLines.add("if ( net = " + net + " ) then { accept; }  # local block");
            exportLines.add("if ( net ~ [ " + net + "+ ] ) then { reject; }");
        }
        exportLines.addAll(poolAccepts);
        List<String> services = new ArrayList<>();
        service(cfg.serviceClusterIPs(), family, "serviceClusterIPs", services, exportLines, skipped);
        service(cfg.serviceExternalIPs(), family, "serviceExternalIPs", services, exportLines, skipped);
        // Reported once (the IPv4 pass); the IPv6 pass decides the same way.
        boolean aggregateLb = ServiceRoutes.aggregateLoadBalancerIPs(cfg, family == 4 ? skipped : new ArrayList<>());
        if (aggregateLb) {
            service(cfg.serviceLoadBalancerIPs(), family, "serviceLoadBalancerIPs", services, exportLines, skipped);
        } else if (family == 4) {
            // Still checked, so a bad range is reported whichever way it is advertised.
            service(cfg.serviceLoadBalancerIPs(), 4, "serviceLoadBalancerIPs", new ArrayList<>(), new ArrayList<>(),
                    skipped);
        }
        for (ServiceRoutes.Route r : ServiceRoutes.routes(view.services().values(), cfg, family, aggregateLb)) {
            services.add(r.prefix());
            exportLines.add("if ( net = " + r.prefix() + " ) then { accept; }  # Service " + r.service());
        }
        return new Exports(blocks, services, exportLines, communities(cfg, family, skipped));
    }

    private static void service(List<BGPConfigurationSpec.CidrBlock> cidrs, int family, String field,
                                List<String> routes, List<String> exportLines, List<Skipped> skipped) {
        for (int i = 0; i < cidrs.size(); i++) {
            Optional<Cidr> c = Cidr.tryParseCidrOrIp(cidrs.get(i).cidr());
            if (c.isEmpty()) {
                if (family == 4) {
                    skipped.add(new Skipped("BGPConfiguration default", "spec." + field + "[" + i + "].cidr: \""
                            + cidrs.get(i).cidr() + "\" is not a CIDR"));
                }
                continue;
            }
            if (c.get().version() == family) {
                String net = c.get().network().toString();
                routes.add(net);
                exportLines.add("if ( net ~ [ " + net + "+ ] ) then { accept; }  # " + field);
            }
        }
    }

    private static List<String> communities(BGPConfigurationSpec cfg, int family, List<Skipped> skipped) {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < cfg.prefixAdvertisements().size(); i++) {
            BGPConfigurationSpec.PrefixAdvertisement pa = cfg.prefixAdvertisements().get(i);
            String field = "spec.prefixAdvertisements[" + i + "]";
            Optional<Cidr> c = Cidr.tryParseCidrOrIp(pa.cidr());
            if (c.isEmpty()) {
                if (family == 4) {
                    skipped.add(new Skipped("BGPConfiguration default", field + ".cidr: \"" + pa.cidr()
                            + "\" is not a CIDR"));
                }
                continue;
            }
            if (c.get().version() != family) {
                continue;
            }
            try {
                StringBuilder adds = new StringBuilder();
                for (String name : pa.communities()) {
                    String value = cfg.communities().stream().filter(x -> name.equals(x.name()))
                            .map(BGPConfigurationSpec.Community::value).findFirst().orElse(name);
                    adds.append(Communities.add(value, field + ".communities")).append(' ');
                }
                lines.add("if ( net ~ [ " + c.get().network() + "+ ] ) then { " + adds + "}");
            } catch (IllegalArgumentException e) {
                skipped.add(new Skipped("BGPConfiguration default", e.getMessage()));
            }
        }
        return lines;
    }

    private static String routerId(LocalNode local, String setting) {
        if (setting != null && !setting.isBlank() && !setting.equals("hash")) {
            Optional<Cidr> ip = Cidr.tryParseCidrOrIp(setting.trim());
            if (ip.isEmpty() || ip.get().version() != 4 || !ip.get().isSingleAddress()) {
                throw new RenderException("CALICO_ROUTER_ID: \"" + setting + "\" is not an IPv4 address or \"hash\"");
            }
            return ip.get().address().toString();
        }
        if (local.ipv4() != null && !"hash".equals(setting)) {
            return local.ipv4();
        }
        // IPv6-only nodes (or CALICO_ROUTER_ID=hash): a stable 32-bit ID from the node name.
        int h = local.name().hashCode();
        return ((h >>> 24) & 0xff) + "." + ((h >>> 16) & 0xff) + "." + ((h >>> 8) & 0xff) + "." + (h & 0xff);
    }

    /** BIRD's log classes at and above Calico's logSeverityScreen (default Info). */
    static String logClasses(String severity) {
        return switch (severity == null ? "Info" : severity) {
            case "Trace", "Debug" -> "all";
            case "Warning" -> "{ warning, error, auth, fatal, bug }";
            case "Error" -> "{ error, auth, fatal, bug }";
            case "Fatal" -> "{ fatal, bug }";
            default -> "{ info, remote, warning, error, auth, fatal, bug }";
        };
    }

    private static String debug(String severity) {
        return switch (severity == null ? "Info" : severity) {
            case "Trace", "Debug" -> "all";
            case "Info" -> "{ states }";
            default -> "off";
        };
    }
}
