package calico.felix.app;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.Node;
import calico.api.model.NodeSpec;
import calico.api.model.NodeStatus;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.memory.MemoryDatastore;
import calico.libcalico.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The key reaches the Node's status (kept with the rest of it), waits for the Node, and is withdrawn. */
class WireguardKeyPublisherTest {

    static final String KEY = "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=";

    private static Optional<String> keyOf(MemoryDatastore store) {
        return store.get(ResourceKey.of(ResourceKind.NODE, "n1")).map(Node.class::cast)
                .map(Node::status).map(NodeStatus::wireguardPublicKey);
    }

    @Test
    void publishesOnceTheNodeExistsKeepsTheRestOfTheStatusAndWithdraws() {
        MemoryDatastore store = new MemoryDatastore();
        try (WireguardKeyPublisher publisher = new WireguardKeyPublisher("n1", () -> store)) {
            publisher.accept(KEY);
            store.create(new Node(ObjectMeta.named("n1"), NodeSpec.ofBgp(null),
                    new NodeStatus(null, null, List.of("10.244.0.0/24"))));
            Await.until("the key on the Node", Duration.ofSeconds(10), () -> keyOf(store).equals(Optional.of(KEY)));
            Node n = (Node) store.get(ResourceKey.of(ResourceKind.NODE, "n1")).orElseThrow();
            assertThat(n.status().podCIDRs()).containsExactly("10.244.0.0/24");

            publisher.accept(null);
            Await.until("the key withdrawn", Duration.ofSeconds(10), () -> keyOf(store).isEmpty());
        }
    }
}
