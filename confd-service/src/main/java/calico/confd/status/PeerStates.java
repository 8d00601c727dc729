package calico.confd.status;

import calico.libcalico.bird.BirdProtocol;
import java.time.Instant;
import java.util.List;

/**
 * What BIRD said about its protocols at {@code at}; {@code error} when it could not be asked.
 */
public record PeerStates(List<BirdProtocol> protocols, String error, Instant at) {

    public PeerStates {
        protocols = List.copyOf(protocols);
    }

    public boolean reachable() {
        return error == null;
    }
}
