package calico.dataplane.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.testing.NetNs;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every test drives {@link Netlink} inside a fresh namespace holding a veth pair
 * {@code nl0 <-> nl1}, and checks the kernel's view with {@code ip -j}.
 */
class NetlinkTest {
    static final String PREFIX = "calico-nlt";
    private static final ObjectMapper JSON = new ObjectMapper();

    private NetNs ns;

    @BeforeEach
    void namespace() {
        ns = NetNs.create(PREFIX);
        ns.exec("ip", "link", "add", "nl0", "type", "veth", "peer", "name", "nl1");
        ns.exec("ip", "link", "set", "nl0", "up");
        ns.exec("ip", "link", "set", "nl1", "up");
    }

    @AfterEach
    void deleteNamespace() {
        ns.close();
    }

    @AfterAll
    static void noNamespaceLeftBehind() {
        assertThat(NetNsLeftovers.named(PREFIX)).isEmpty();
    }

    /** Runs {@code body} with a Netlink opened and closed inside the namespace. */
    private <T> T nl(Function<Netlink, T> body) {
        return ns.call(() -> {
            try (Netlink n = new Netlink()) {
                return body.apply(n);
            }
        });
    }

    private void nlRun(java.util.function.Consumer<Netlink> body) {
        nl((Netlink n) -> {
            body.accept(n);
            return null;
        });
    }

    private List<JsonNode> ipJson(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-j"));
        cmd.addAll(List.of(args));
        try {
            JsonNode root = JSON.readTree(ns.exec(cmd.toArray(String[]::new)));
            return StreamSupport.stream(root.spliterator(), false).toList();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private JsonNode ipLink(String name) {
        return ipJson("link", "show", "dev", name).get(0);
    }

    private static InetAddress ip(String literal) {
        return IpPrefix.parse(literal).address();
    }

    // ---------------------------------------------------------------- links

    @Test
    void listsOnlyTheNamespacesLinksWithKindMacAndMtu() {
        List<Link> links = nl((Netlink n) -> n.links());
        JsonNode nl0 = ipLink("nl0");

        assertThat(links).extracting(Link::name).containsExactlyInAnyOrder("lo", "nl0", "nl1");
        Link link = links.stream().filter(l -> l.name().equals("nl0")).findFirst().orElseThrow();
        assertThat(link.index()).isEqualTo(nl0.get("ifindex").asInt());
        assertThat(link.mtu()).isEqualTo(nl0.get("mtu").asInt());
        assertThat(link.mac()).contains(nl0.get("address").asText());
        assertThat(link.kind()).contains("veth");
        assertThat(link.up()).isTrue();
        Link lo = links.stream().filter(l -> l.name().equals("lo")).findFirst().orElseThrow();
        assertThat(lo.kind()).isEmpty();
    }

    @Test
    void getsALinkByNameAndReportsAMissingOneAsEmpty() {
        assertThat(nl((Netlink n) -> n.link("nl1"))).hasValueSatisfying(l -> {
            assertThat(l.index()).isEqualTo(ipLink("nl1").get("ifindex").asInt());
            assertThat(l.name()).isEqualTo("nl1");
        });
        assertThat(nl((Netlink n) -> n.link("absent0"))).isEmpty();
    }

    @Test
    void setsALinkDownAndUpAndChangesItsMtu() {
        nlRun(n -> n.setLinkUp("nl0", false));
        assertThat(ipLink("nl0").get("flags").toString()).doesNotContain("\"UP\"");
        assertThat(nl((Netlink n) -> n.link("nl0").orElseThrow().up())).isFalse();

        nlRun(n -> n.setLinkUp("nl0", true));
        assertThat(ipLink("nl0").get("flags").toString()).contains("\"UP\"");

        nlRun(n -> n.setLinkMtu("nl0", 1410));
        assertThat(ipLink("nl0").get("mtu").asInt()).isEqualTo(1410);
        assertThat(nl((Netlink n) -> n.link("nl0").orElseThrow().mtu())).isEqualTo(1410);
    }

    // ---------------------------------------------------------------- addresses

    @Test
    void addsListsAndDeletesIpv4AndIpv6Addresses() {
        IpPrefix v4 = IpPrefix.parse("10.1.0.1/24");
        IpPrefix v6 = IpPrefix.parse("fd00:1::1/64");
        int index = nl((Netlink n) -> n.linkIndex("nl0"));
        nlRun(n -> {
            n.addAddress(index, v4);
            n.addAddress(index, v6);
        });

        JsonNode info = ipJson("addr", "show", "dev", "nl0").get(0).get("addr_info");
        List<String> shown = StreamSupport.stream(info.spliterator(), false)
                .map(a -> a.get("local").asText() + "/" + a.get("prefixlen").asInt()).toList();
        assertThat(shown).contains("10.1.0.1/24", "fd00:1::1/64");
        assertThat(nl((Netlink n) -> n.addresses(index))).extracting(Address::prefix).contains(v4, v6)
                .allSatisfy(p -> assertThat(p).isNotNull());
        assertThat(nl((Netlink n) -> n.addresses())).extracting(Address::prefix)
                .contains(v4, v6, IpPrefix.parse("127.0.0.1/8"));

        nlRun(n -> {
            n.deleteAddress(index, v4);
            n.deleteAddress(index, v6);
        });
        assertThat(ns.exec("ip", "addr", "show", "dev", "nl0")).doesNotContain("10.1.0.1").doesNotContain("fd00:1::1");
        assertThat(nl((Netlink n) -> n.addresses(index))).extracting(Address::prefix).doesNotContain(v4, v6);
    }

    @Test
    void duplicateAddressIsEexistAndMissingAddressIsNotFound() {
        IpPrefix v4 = IpPrefix.parse("10.1.0.1/24");
        int index = nl((Netlink n) -> n.linkIndex("nl0"));
        nlRun(n -> n.addAddress(index, v4));

        assertThatThrownBy(() -> nlRun(n -> n.addAddress(index, v4)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errno()).isEqualTo(Errno.EEXIST);
                    assertThat(e.alreadyExists()).isTrue();
                    assertThat(e.getMessage()).startsWith("add address 10.1.0.1/24 dev " + index + ": EEXIST (File exists)");
                });
        assertThatThrownBy(() -> nlRun(n -> n.deleteAddress(index, IpPrefix.parse("10.9.9.9/24"))))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errnoName()).isEqualTo("EADDRNOTAVAIL");
                    assertThat(e.notFound()).isTrue();
                    assertThat(e.alreadyExists()).isFalse();
                });
    }

    // ---------------------------------------------------------------- routes

    private JsonNode onlyRoute(String dst, String... tableArgs) {
        List<String> args = new ArrayList<>(List.of("route", "show"));
        args.addAll(List.of(tableArgs));
        List<JsonNode> matching = ipJson(args.toArray(String[]::new)).stream()
                .filter(r -> r.get("dst").asText().equals(dst)).toList();
        assertThat(matching).as("routes to %s", dst).hasSize(1);
        return matching.get(0);
    }

    @Test
    void addsReplacesAndDeletesRoutesInTheMainTable() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        int nl1 = nl((Netlink n) -> n.linkIndex("nl1"));
        nlRun(n -> n.addAddress(nl0, IpPrefix.parse("10.1.0.1/24")));

        Route workload = Route.device(IpPrefix.parse("10.65.0.3/32"), nl0);
        Route viaGw = Route.via(IpPrefix.parse("10.2.0.0/24"), ip("10.1.0.2"), nl0).withProtocol(Route.PROTOCOL_STATIC);
        nlRun(n -> {
            n.addRoute(workload);
            n.addRoute(viaGw);
        });
        JsonNode w = onlyRoute("10.65.0.3");
        assertThat(w.get("dev").asText()).isEqualTo("nl0");
        assertThat(w.get("scope").asText()).isEqualTo("link");
        JsonNode g = onlyRoute("10.2.0.0/24");
        assertThat(g.get("gateway").asText()).isEqualTo("10.1.0.2");
        assertThat(g.get("protocol").asText()).isEqualTo("static");
        assertThat(w.has("protocol")).as("boot, the default, is not printed by ip").isFalse();

        List<Route> listed = nl((Netlink n) -> n.routes());
        assertThat(listed).contains(workload, viaGw);

        // Replace moves the workload route to the other interface: still exactly one route.
        nlRun(n -> n.replaceRoute(Route.device(IpPrefix.parse("10.65.0.3/32"), nl1)));
        assertThat(onlyRoute("10.65.0.3").get("dev").asText()).isEqualTo("nl1");

        nlRun(n -> {
            n.deleteRoute(Route.device(IpPrefix.parse("10.65.0.3/32"), nl1));
            n.deleteRoute(viaGw);
        });
        assertThat(ipJson("route", "show")).extracting(r -> r.get("dst").asText())
                .doesNotContain("10.65.0.3", "10.2.0.0/24");
        assertThat(nl((Netlink n) -> n.routes())).extracting(Route::destination)
                .doesNotContain(IpPrefix.parse("10.65.0.3/32"), IpPrefix.parse("10.2.0.0/24"));
    }

    @Test
    void duplicateRouteIsEexistAndDeletingAMissingRouteIsNotFound() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        Route r = Route.device(IpPrefix.parse("10.65.0.4/32"), nl0);
        nlRun(n -> n.addRoute(r));

        assertThatThrownBy(() -> nlRun(n -> n.addRoute(r)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.alreadyExists()).isTrue());
        nlRun(n -> n.deleteRoute(r));
        assertThatThrownBy(() -> nlRun(n -> n.deleteRoute(r)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errnoName()).isIn("ESRCH", "ENOENT");
                    assertThat(e.notFound()).isTrue();
                    assertThat(e.getMessage()).startsWith("delete route 10.65.0.4/32 dev " + nl0 + ": ");
                });
    }

    @Test
    void routesInCustomTablesIncludingAboveTwoFiftyFiveAndBlackholes() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        Route small = Route.device(IpPrefix.parse("10.5.0.0/24"), nl0).inTable(100);
        Route blackhole = Route.blackhole(IpPrefix.parse("10.6.0.0/26")).inTable(1000);
        Route mainBlackhole = Route.blackhole(IpPrefix.parse("10.7.0.0/26"));
        nlRun(n -> {
            n.addRoute(small);
            n.addRoute(blackhole);
            n.addRoute(mainBlackhole);
        });

        assertThat(onlyRoute("10.5.0.0/24", "table", "100").get("dev").asText()).isEqualTo("nl0");
        JsonNode bh = onlyRoute("10.6.0.0/26", "table", "1000");
        assertThat(bh.get("type").asText()).isEqualTo("blackhole");
        assertThat(onlyRoute("10.7.0.0/26").get("type").asText()).isEqualTo("blackhole");
        JsonNode all = ipJson("route", "show", "table", "all").stream()
                .filter(r -> r.get("dst").asText().equals("10.6.0.0/26")).findFirst().orElseThrow();
        assertThat(all.get("table").asText()).isEqualTo("1000");

        assertThat(nl((Netlink n) -> n.routes(100))).containsExactly(small);
        assertThat(nl((Netlink n) -> n.routes(1000))).containsExactly(blackhole);
        assertThat(nl((Netlink n) -> n.routes())).contains(mainBlackhole).doesNotContain(small, blackhole);
        assertThat(nl((Netlink n) -> n.routes(0))).contains(small, blackhole, mainBlackhole);

        nlRun(n -> n.deleteRoute(Route.blackhole(IpPrefix.parse("10.6.0.0/26")).inTable(1000)));
        assertThat(ns.exec("ip", "route", "show", "table", "1000")).isBlank();
        assertThat(ns.exec("ip", "route", "show", "table", "100")).contains("10.5.0.0/24");
    }

    @Test
    void onlinkDefaultRouteViaTheLinkLocalGateway() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        // The calico workload default route: the gateway is on no subnet of the interface.
        Route def = Route.via(IpPrefix.parse("0.0.0.0/0"), ip("169.254.1.1"), nl0).withOnlink();
        assertThatThrownBy(() -> nlRun(n -> n.addRoute(Route.via(IpPrefix.parse("0.0.0.0/0"), ip("169.254.1.1"), nl0))))
                .as("without onlink the kernel refuses the unreachable gateway")
                .isInstanceOf(NetlinkException.class);
        nlRun(n -> n.addRoute(def));

        JsonNode r = onlyRoute("default");
        assertThat(r.get("gateway").asText()).isEqualTo("169.254.1.1");
        assertThat(r.get("dev").asText()).isEqualTo("nl0");
        assertThat(r.get("flags").toString()).contains("onlink");
        assertThat(nl((Netlink n) -> n.routes())).contains(def);
    }

    @Test
    void ipv6DeviceRoutes() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        Route r = Route.device(IpPrefix.parse("fd00:65::3/128"), nl0).withScope(Route.SCOPE_UNIVERSE);
        nlRun(n -> n.addRoute(r));
        JsonNode shown = ipJson("-6", "route", "show").stream()
                .filter(j -> j.get("dst").asText().equals("fd00:65::3")).findFirst().orElseThrow();
        assertThat(shown.get("dev").asText()).isEqualTo("nl0");
        Route listed = nl((Netlink n) -> n.routes()).stream()
                .filter(x -> x.destination().equals(r.destination())).findFirst().orElseThrow();
        assertThat(listed.linkIndex()).isEqualTo(nl0);
        assertThat(listed.priority()).isEqualTo(1024); // the kernel's IPv6 default metric
        nlRun(n -> n.deleteRoute(r));
        assertThat(ns.exec("ip", "-6", "route", "show")).doesNotContain("fd00:65::3");
    }

    // ---------------------------------------------------------------- neighbours

    @Test
    void addsReplacesListsAndDeletesPermanentNeighbours() {
        int nl0 = nl((Netlink n) -> n.linkIndex("nl0"));
        InetAddress v4 = ip("10.1.0.9");
        InetAddress v6 = ip("fd00:1::9");
        nlRun(n -> {
            n.setPermanentNeighbour(nl0, v4, "ee:ee:ee:ee:ee:01");
            n.setPermanentNeighbour(nl0, v6, "ee:ee:ee:ee:ee:02");
        });
        JsonNode n4 = ipJson("neigh", "show", "dev", "nl0").stream()
                .filter(j -> j.get("dst").asText().equals("10.1.0.9")).findFirst().orElseThrow();
        assertThat(n4.get("lladdr").asText()).isEqualTo("ee:ee:ee:ee:ee:01");
        assertThat(n4.get("state").toString()).contains("PERMANENT");

        nlRun(n -> n.setPermanentNeighbour(nl0, v4, "EE:EE:EE:EE:EE:03")); // replace, any case
        assertThat(ns.exec("ip", "neigh", "show", "dev", "nl0")).contains("10.1.0.9 lladdr ee:ee:ee:ee:ee:03 PERMANENT");
        assertThat(nl((Netlink n) -> n.neighbours(nl0))).contains(
                new Neighbour(nl0, v4, java.util.Optional.of("ee:ee:ee:ee:ee:03"), Neighbour.NUD_PERMANENT),
                new Neighbour(nl0, v6, java.util.Optional.of("ee:ee:ee:ee:ee:02"), Neighbour.NUD_PERMANENT));

        nlRun(n -> n.deleteNeighbour(nl0, v4));
        assertThat(ns.exec("ip", "neigh", "show", "dev", "nl0")).doesNotContain("10.1.0.9 ");
        assertThatThrownBy(() -> nlRun(n -> n.deleteNeighbour(nl0, v4)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                    assertThat(e.notFound()).isTrue();
                });
        assertThatThrownBy(() -> nlRun(n -> n.setPermanentNeighbour(nl0, v4, "not-a-mac")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mac");
    }

    // ---------------------------------------------------------------- errors

    @Test
    void missingInterfaceIsEnodevWithARuleNamingMessage() {
        assertThatThrownBy(() -> nlRun(n -> n.setLinkUp("absent0", true)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errno()).isEqualTo(Errno.ENODEV);
                    assertThat(e.getMessage()).startsWith("set link absent0 up: ENODEV (No such device)");
                    assertThat(e.notFound()).isFalse();
                });
        assertThatThrownBy(() -> nlRun(n -> n.linkIndex("absent0")))
                .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errnoName()).isEqualTo("ENODEV"));
        assertThatThrownBy(() -> nlRun(n -> n.addRoute(Route.device(IpPrefix.parse("10.0.0.0/24"), 9999))))
                .isInstanceOfSatisfying(NetlinkException.class, e -> {
                    assertThat(e.errnoName()).isEqualTo("ENODEV");
                    assertThat(e.getMessage()).startsWith("add route 10.0.0.0/24 dev 9999: ENODEV (No such device)");
                });
        assertThatThrownBy(() -> nlRun(n -> n.setLinkMtu("nl0", 10)))
                .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errnoName()).isEqualTo("EINVAL"));
    }

    @Test
    void badInputIsRejectedBeforeTheKernelWithTheFieldNamed() {
        assertThatThrownBy(() -> IpPrefix.parse("10.0.0.0/33")).hasMessageContaining("prefix length: 33");
        assertThatThrownBy(() -> IpPrefix.parse("example.com/24")).hasMessageContaining("not an IP literal");
        assertThatThrownBy(() -> Route.via(IpPrefix.parse("10.0.0.0/8"), ip("fd00::1"), 1))
                .hasMessageContaining("gateway");
        assertThatThrownBy(() -> nlRun(n -> n.setLinkUp("a/b", true))).hasMessageContaining("interface name");
        assertThatThrownBy(() -> nlRun(n -> n.addAddress(0, IpPrefix.parse("10.0.0.1/24")))).hasMessageContaining("linkIndex");
    }

    @Test
    void oneSocketServesManyRequestsInSequence() {
        int count = nl((Netlink n) -> {
            int nl0 = n.linkIndex("nl0");
            for (int i = 0; i < 200; i++) {
                n.addRoute(Route.device(IpPrefix.parse("10.70." + i + ".0/24"), nl0));
            }
            // A failure in the middle leaves no stray reply to confuse the next request.
            try {
                n.addRoute(Route.device(IpPrefix.parse("10.70.0.0/24"), nl0));
            } catch (NetlinkException expected) {
                // EEXIST
            }
            return n.routes().size();
        });
        assertThat(count).isGreaterThanOrEqualTo(200);
        assertThat(ipJson("route", "show")).hasSizeGreaterThanOrEqualTo(200);
    }
}
