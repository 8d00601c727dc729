package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * What calico-node reports in a {@link CalicoNodeStatus}, read from BIRD's control socket. Only
 * the requested classes are filled; the others are left out.
 *
 * @param lastUpdated RFC 3339 UTC time of the last report
 * @param agent       the BGP daemons (class {@code Agent})
 * @param bgp         the BGP sessions (class {@code BGP})
 * @param routes      the routes BIRD knows (class {@code Routes})
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CalicoNodeStatusStatus(String lastUpdated, Agent agent, Bgp bgp, Routes routes) {

    /** The IPv4 and IPv6 BGP daemons. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Agent(@JsonProperty("birdV4") Daemon birdV4, @JsonProperty("birdV6") Daemon birdV6) {
    }

    /**
     * One BGP daemon.
     *
     * @param state                   {@code Ready} or {@code NotReady}
     * @param version                 the daemon's version
     * @param routerID                its router id
     * @param lastBootTime            when it started, as BIRD prints it
     * @param lastReconfigurationTime when it last read its configuration, as BIRD prints it
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Daemon(String state, String version, @JsonProperty("routerID") String routerID,
                         String lastBootTime, String lastReconfigurationTime) {
        public static final String READY = "Ready";
        public static final String NOT_READY = "NotReady";
    }

    /** Session counts and the sessions of each family. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Bgp(@JsonProperty("numberEstablishedV4") Integer numberEstablishedV4,
                      @JsonProperty("numberNotEstablishedV4") Integer numberNotEstablishedV4,
                      @JsonProperty("numberEstablishedV6") Integer numberEstablishedV6,
                      @JsonProperty("numberNotEstablishedV6") Integer numberNotEstablishedV6,
                      @JsonProperty("peersV4") List<Peer> peersV4,
                      @JsonProperty("peersV6") List<Peer> peersV6) {
        public Bgp {
            peersV4 = peersV4 == null ? List.of() : List.copyOf(peersV4);
            peersV6 = peersV6 == null ? List.of() : List.copyOf(peersV6);
        }
    }

    /**
     * One BGP session.
     *
     * @param peerIP the peer's address
     * @param type   {@code NodeMesh}, {@code NodePeer} or {@code GlobalPeer}
     * @param state  BGP's state: {@code Idle}, {@code Connect}, {@code Active}, {@code OpenSent},
     *               {@code OpenConfirm}, {@code Established}, {@code Close}
     * @param since  when the state last changed, as BIRD prints it
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Peer(@JsonProperty("peerIP") String peerIP, String type, String state, String since) {
    }

    /** The routes of each family. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Routes(@JsonProperty("routesV4") List<Route> routesV4, @JsonProperty("routesV6") List<Route> routesV6) {
        public Routes {
            routesV4 = routesV4 == null ? List.of() : List.copyOf(routesV4);
            routesV6 = routesV6 == null ? List.of() : List.copyOf(routesV6);
        }
    }

    /**
     * One route.
     *
     * @param type        {@code FIB} (the route in use) or {@code RIB} (known, not in use)
     * @param destination the prefix
     * @param gateway     the next hop, or {@code N/A}
     * @param iface       the device, {@code blackhole} or {@code unreachable}
     * @param learnedFrom where it came from
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Route(String type, String destination, String gateway,
                        @JsonProperty("interface") String iface, LearnedFrom learnedFrom) {
    }

    /**
     * Where a route came from.
     *
     * @param sourceType {@code Kernel}, {@code Static}, {@code Direct}, {@code NodeMesh} or {@code BGPPeer}
     * @param peerIP     for a BGP route, the peer that sent it
     */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record LearnedFrom(String sourceType, @JsonProperty("peerIP") String peerIP) {
    }
}
