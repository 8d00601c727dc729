package calico.libcalico.bird;

/**
 * One line of {@code show protocols all}: a protocol's name, kind, state and info, plus for BGP
 * the session state and neighbour from its detail lines.
 *
 * @param name       protocol name ({@code Mesh_10_0_0_2})
 * @param proto      {@code BGP}, {@code Kernel}, {@code Static}, ...
 * @param state      {@code up}, {@code start}, {@code down}, ...
 * @param since      when the state last changed, as BIRD prints it
 * @param info       BIRD's info column ({@code Established}, {@code Active}, {@code Connect}, ...)
 * @param bgpState   the detail's {@code BGP state:} line, or {@code null}
 * @param neighbor   the detail's {@code Neighbor address:}, or {@code null}
 * @param lastError  the detail's {@code Last error:}, or {@code null}
 */
public record BirdProtocol(String name, String proto, String state, String since, String info, String bgpState,
                           String neighbor, String lastError) {

    /** {@return whether this is a BGP session in state Established} */
    public boolean established() {
        return "BGP".equals(proto) && ("Established".equals(bgpState) || info.startsWith("Established"));
    }
}
