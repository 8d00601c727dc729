package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.set;
import static calico.felix.calc.InfraFixtures.vxlanNode;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.VtepRemove;
import calico.felix.calc.DataplaneUpdate.VtepUpdate;
import calico.libcalico.syncer.Update;
import java.util.List;
import org.junit.jupiter.api.Test;

class VtepStageTest {

    private final Dispatcher dispatcher = new Dispatcher();
    private final InfraRecorder out = new InfraRecorder();

    VtepStageTest() {
        new VtepStage(out).registerWith(dispatcher);
    }

    private void send(Update... updates) {
        dispatcher.onUpdates(List.of(updates));
    }

    @Test
    void derivedMacsAreCalicosForTheSameNodeName() {
        // The values Calico's own calculation-graph tests expect for node "remotehostname".
        assertThat(VtepStage.derivedMac("remotehostname")).isEqualTo("66:3e:ca:a4:db:65");
        assertThat(VtepStage.derivedMac("remotehostname-v6")).isEqualTo("66:a0:68:c9:4c:79");
    }

    @Test
    void aNodeWithTunnelAndNodeAddressesIsAVtepWithTheDerivedOrGivenMac() {
        send(set(vxlanNode("remotehostname", "192.168.0.2/24", "10.244.1.0", null, "fd00::2/64", "fd00:10::1")));
        assertThat(out.drain()).containsExactly(new VtepUpdate("remotehostname", "66:3e:ca:a4:db:65", "10.244.1.0",
                "192.168.0.2", "66:a0:68:c9:4c:79", "fd00:10::1", "fd00::2"));

        // A MAC written on the Node wins (upper case and dashes normalised); v6 keeps the derived one.
        send(set(vxlanNode("remotehostname", "192.168.0.2/24", "10.244.1.0", "AA-BB-CC-DD-EE-01", "fd00::2/64", "fd00:10::1")));
        assertThat(out.drain()).containsExactly(new VtepUpdate("remotehostname", "aa:bb:cc:dd:ee:01", "10.244.1.0",
                "192.168.0.2", "66:a0:68:c9:4c:79", "fd00:10::1", "fd00::2"));

        // The same again: nothing.
        send(set(vxlanNode("remotehostname", "192.168.0.2/24", "10.244.1.0", "aa:bb:cc:dd:ee:01", "fd00::2/64", "fd00:10::1")));
        assertThat(out.drain()).isEmpty();
    }

    @Test
    void aHalfNeedsBothItsTunnelAddressAndItsNodeAddress() {
        send(set(vxlanNode("b", null, "10.244.1.0", null, null, null)));          // no node address yet
        send(set(vxlanNode("c", "192.168.0.3/24", null, null, null, null)));       // no tunnel address
        send(set(node("d", "192.168.0.4/24", null)));                               // plain node
        assertThat(out.drain()).isEmpty();

        send(set(vxlanNode("b", "192.168.0.2/24", "10.244.1.0", null, null, "fd00:10::1"))); // v6 tunnel, no v6 address
        assertThat(out.drain()).containsExactly(new VtepUpdate("b", VtepStage.derivedMac("b"), "10.244.1.0",
                "192.168.0.2", null, null, null));

        send(set(vxlanNode("b", "192.168.0.2/24", "not-an-ip", null, null, null)));  // unusable: treated as unset
        assertThat(out.drain()).containsExactly(new VtepRemove("b"));

        send(set(vxlanNode("b", "192.168.0.2/24", "10.244.1.0", null, null, null)));
        out.drain();
        send(deleted(ResourceKind.NODE, "b"));
        assertThat(out.drain()).containsExactly(new VtepRemove("b"));
        send(deleted(ResourceKind.NODE, "b")); // nothing more to remove
        assertThat(out.drain()).isEmpty();
    }
}
