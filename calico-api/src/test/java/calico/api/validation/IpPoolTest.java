package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IPPoolSpec.AllowedUse;
import calico.api.model.IPPoolSpec.AssignmentMode;
import calico.api.model.ObjectMeta;
import java.util.List;
import org.junit.jupiter.api.Test;

/** IP pool defaulting and the cross-pool overlap check the datastore runs on create. */
class IpPoolTest {

    private static IPPool pool(String name, String cidr) {
        return new IPPool(ObjectMeta.named(name), IPPoolSpec.ofCidr(cidr));
    }

    @Test
    void defaultsAsCalicoDoes() {
        IPPool v4 = ResourceValidator.get().defaultAndValidate(pool("v4", "10.244.0.0/16"));
        assertThat(v4.spec().blockSize()).isEqualTo(26);
        assertThat(v4.spec().ipipMode()).isEqualTo(EncapsulationMode.Never);
        assertThat(v4.spec().vxlanMode()).isEqualTo(EncapsulationMode.Never);
        assertThat(v4.spec().nodeSelector()).isEqualTo("all()");
        assertThat(v4.spec().allowedUses()).containsExactly(AllowedUse.Workload, AllowedUse.Tunnel);
        assertThat(v4.spec().assignmentMode()).isEqualTo(AssignmentMode.Automatic);
        IPPool v6 = ResourceValidator.get().defaultAndValidate(pool("v6", "FD00:0:0::/48"));
        assertThat(v6.spec().blockSize()).isEqualTo(122);
        assertThat(v6.spec().cidr()).as("canonical form").isEqualTo("fd00::/48");
    }

    @Test
    void explicitValuesAreKept() {
        var spec = new IPPoolSpec("10.0.0.0/16", EncapsulationMode.Always, EncapsulationMode.Never, true, null, null,
                24, "all()", null, List.of(AllowedUse.Workload), AssignmentMode.Manual);
        IPPool out = ResourceValidator.get().defaultAndValidate(new IPPool(ObjectMeta.named("p"), spec));
        assertThat(out.spec()).isEqualTo(spec);
    }

    @Test
    void overlapsAreReportedPerExistingPool() {
        List<IPPool> existing = List.of(pool("a", "10.0.0.0/16"), pool("b", "10.1.0.0/16"), pool("c", "fd00::/48"),
                pool("broken", "nonsense"));
        assertThat(IpPoolOverlap.check(pool("new", "10.0.0.0/8"), existing)).containsExactly(
                new FieldError("spec.cidr", "IPPool(new) CIDR 10.0.0.0/8 overlaps with IPPool(a) CIDR 10.0.0.0/16"),
                new FieldError("spec.cidr", "IPPool(new) CIDR 10.0.0.0/8 overlaps with IPPool(b) CIDR 10.1.0.0/16"));
        assertThat(IpPoolOverlap.check(pool("new", "10.0.128.0/24"), existing)).extracting(FieldError::reason)
                .containsExactly("IPPool(new) CIDR 10.0.128.0/24 overlaps with IPPool(a) CIDR 10.0.0.0/16");
        assertThat(IpPoolOverlap.check(pool("new", "10.2.0.0/16"), existing)).isEmpty();
        assertThat(IpPoolOverlap.check(pool("new", "fd00:0:0:1::/64"), existing)).hasSize(1);
    }

    @Test
    void samePoolIsNotAnOverlap() {
        assertThat(IpPoolOverlap.check(pool("a", "10.0.0.0/16"), List.of(pool("a", "10.0.0.0/16")))).isEmpty();
        assertThat(IpPoolOverlap.check(pool("x", "garbage"), List.of(pool("a", "10.0.0.0/16")))).isEmpty();
    }
}
