package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.pool;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.EncapsulationMode;
import calico.api.model.ResourceKind;
import calico.felix.calc.DataplaneUpdate.IpPoolRemove;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.libcalico.syncer.Update;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class IpPoolStageTest {

    static Stream<Arguments> cases() {
        IpPoolUpdate p = new IpPoolUpdate("p", "10.0.0.0/16", false, "Never", "Never", false);
        return Stream.of(
                Arguments.of("unset fields take Calico's defaults",
                        List.of(set(pool("p", "10.0.0.0/16", null, null, null, null))), List.of(p)),
                Arguments.of("every field carried",
                        List.of(set(pool("p", "fd00::/48", true, EncapsulationMode.CrossSubnet, EncapsulationMode.Always,
                                true))),
                        List.of(new IpPoolUpdate("p", "fd00::/48", true, "CrossSubnet", "Always", true))),
                Arguments.of("explicit defaults equal unset: no-op",
                        List.of(set(pool("p", "10.0.0.0/16", null, null, null, null)),
                                set(pool("p", "10.0.0.0/16", false, EncapsulationMode.Never, EncapsulationMode.Never,
                                        false))),
                        List.of(p)),
                Arguments.of("natOutgoing change",
                        List.of(set(pool("p", "10.0.0.0/16", false)), set(pool("p", "10.0.0.0/16", true))),
                        List.of(p, new IpPoolUpdate("p", "10.0.0.0/16", true, "Never", "Never", false))),
                Arguments.of("remove after add",
                        List.of(set(pool("p", "10.0.0.0/16", false)), deleted(ResourceKind.IP_POOL, "p")),
                        List.of(p, new IpPoolRemove("p"))),
                Arguments.of("remove of a pool never sent is dropped",
                        List.of(deleted(ResourceKind.IP_POOL, "q")), List.of()),
                Arguments.of("an unparsable CIDR is treated as absent",
                        List.of(set(pool("p", "10.0.0.0/16", false)), set(pool("p", "10.0.0.0/99", false)),
                                set(pool("q", "nonsense", false))),
                        List.of(p, new IpPoolRemove("p"))),
                Arguments.of("host bits are cleared",
                        List.of(set(pool("p", "10.0.0.7/16", false))), List.of(p)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void emitsOnlyChangesKeyedByPoolName(String name, List<Update> input, List<DataplaneUpdate> expected) {
        Dispatcher dispatcher = new Dispatcher();
        InfraRecorder out = new InfraRecorder();
        new IpPoolStage(out).registerWith(dispatcher);

        input.forEach(u -> dispatcher.onUpdates(List.of(u)));

        assertThat(out.events).containsExactlyElementsOf(expected);
    }
}
