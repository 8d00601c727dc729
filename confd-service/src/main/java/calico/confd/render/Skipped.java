package calico.confd.render;

/**
 * Something the configuration left out, and why: a peer with bad input, a node without an
 * address. Reported at the REST endpoint and in health details; never fatal.
 *
 * @param source the resource, e.g. {@code BGPPeer tor-switch-peer}
 * @param reason the field and what is wrong with it
 */
public record Skipped(String source, String reason) {
}
