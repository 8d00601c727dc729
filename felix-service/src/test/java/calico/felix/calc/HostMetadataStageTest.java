package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.node;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.HostMetadataRemove;
import calico.felix.calc.DataplaneUpdate.HostMetadataUpdate;
import calico.libcalico.syncer.Update;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HostMetadataStageTest {

    /** A sequence of node updates and the exact updates the stage must emit for it. */
    static Stream<Arguments> cases() {
        HostMetadataUpdate a = new HostMetadataUpdate("a", "10.0.0.1", null, Map.of());
        return Stream.of(
                Arguments.of("address sent without its prefix length",
                        List.of(set(node("a", "10.0.0.1/24", null))), List.of(a)),
                Arguments.of("bare address and IPv6",
                        List.of(set(node("a", "10.0.0.1", "fd00::1/64"))),
                        List.of(new HostMetadataUpdate("a", "10.0.0.1", "fd00::1", Map.of()))),
                Arguments.of("same address with another prefix length is a no-op",
                        List.of(set(node("a", "10.0.0.1/24", null)), set(node("a", "10.0.0.1/16", null))),
                        List.of(a)),
                Arguments.of("address change",
                        List.of(set(node("a", "10.0.0.1/24", null)), set(node("a", "10.0.0.2/24", null))),
                        List.of(a, new HostMetadataUpdate("a", "10.0.0.2", null, Map.of()))),
                Arguments.of("label change",
                        List.of(set(node("a", "10.0.0.1/24", null)), set(node("a", "10.0.0.1/24", null, Map.of("r", "x")))),
                        List.of(a, new HostMetadataUpdate("a", "10.0.0.1", null, Map.of("r", "x")))),
                Arguments.of("node without addresses is still sent (labels matter)",
                        List.of(set(node("a", null, null, Map.of("r", "x")))),
                        List.of(new HostMetadataUpdate("a", null, null, Map.of("r", "x")))),
                Arguments.of("invalid or wrong-family address is sent as none",
                        List.of(set(node("a", "10.0.0.300/24", "10.0.0.1"))),
                        List.of(new HostMetadataUpdate("a", null, null, Map.of()))),
                Arguments.of("remove after add",
                        List.of(set(node("a", "10.0.0.1/24", null)), deleted(ResourceKind.NODE, "a")),
                        List.of(a, new HostMetadataRemove("a"))),
                Arguments.of("remove of a node never sent is dropped",
                        List.of(deleted(ResourceKind.NODE, "b")), List.of()),
                Arguments.of("re-add after remove",
                        List.of(set(node("a", "10.0.0.1/24", null)), deleted(ResourceKind.NODE, "a"),
                                set(node("a", "10.0.0.1/24", null))),
                        List.of(a, new HostMetadataRemove("a"), a)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void emitsOnlyChangesKeyedByNodeName(String name, List<Update> input, List<DataplaneUpdate> expected) {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        new HostMetadataStage(out).registerWith(dispatcher);

        input.forEach(u -> dispatcher.onUpdates(List.of(u)));

        assertThat(out.events).containsExactlyElementsOf(expected);
    }
}
