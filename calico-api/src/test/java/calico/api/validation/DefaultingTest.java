package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.Action;
import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.Tier;
import calico.api.model.WorkloadEndpoint;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Calico's defaults, and the contract that defaulting returns a new value of the same kind. */
class DefaultingTest {

    private final ResourceValidator validator = ResourceValidator.get();

    @ParameterizedTest(name = "ingress={0} egress={1} -> {2}")
    @CsvSource({
            "false, false, Ingress",
            "true,  false, Ingress",
            "false, true,  Egress",
            "true,  true,  Ingress+Egress"})
    void policyTypesFollowTheRulesPresent(boolean ingress, boolean egress, String expected) {
        String spec = "{" + (ingress ? "ingress: [{action: Allow}]," : "") + (egress ? "egress: [{action: Allow}]" : "") + "}";
        var p = validator.defaultAndValidate((GlobalNetworkPolicy) Yaml.parse(Yaml.gnp(spec)));
        List<PolicyType> want = expected.equals("Ingress+Egress") ? List.of(PolicyType.Ingress, PolicyType.Egress)
                : List.of(PolicyType.valueOf(expected));
        assertThat(p.spec().types()).isEqualTo(want);
    }

    @Test
    void explicitTypesAreKept() {
        var p = validator.defaultAndValidate((GlobalNetworkPolicy) Yaml.parse(Yaml.gnp("{types: [Egress]}")));
        assertThat(p.spec().types()).containsExactly(PolicyType.Egress);
    }

    @Test
    void policyTierDefaultsToDefault() {
        var gnp = validator.defaultAndValidate((GlobalNetworkPolicy) Yaml.parse(Yaml.gnp("{selector: all()}")));
        var np = validator.defaultAndValidate((NetworkPolicy) Yaml.parse(Yaml.np("{}")));
        assertThat(gnp.spec().tier()).isEqualTo("default");
        assertThat(np.spec().tier()).isEqualTo("default");
        assertThat(gnp.spec().selector()).isEqualTo("all()");
    }

    @Test
    void policyWithoutSpecIsDefaultedNotRejected() {
        var p = validator.defaultAndValidate(new GlobalNetworkPolicy(ObjectMeta.named("p"), null));
        assertThat(p.spec().tier()).isEqualTo("default");
        assertThat(p.spec().types()).containsExactly(PolicyType.Ingress);
    }

    @Test
    void tierDefaultsToDenyAtTheDefaultOrder() {
        var t = validator.defaultAndValidate(new Tier(ObjectMeta.named("security"), null));
        assertThat(t.spec().defaultAction()).isEqualTo(Action.Deny);
        assertThat(t.spec().order()).isEqualTo(1_000_000.0);
        var kept = validator.defaultAndValidate((Tier) Yaml.parse(Yaml.resource("Tier", "{name: t}", "{order: 5, defaultAction: Pass}")));
        assertThat(kept.spec().order()).isEqualTo(5.0);
        assertThat(kept.spec().defaultAction()).isEqualTo(Action.Pass);
    }

    @Test
    void workloadEndpointNameAndLabelsAreDerived() {
        var wep = (WorkloadEndpoint) Yaml.parse(Yaml.resource("WorkloadEndpoint", "{namespace: prod, labels: {app: web}}",
                "{node: node-1, orchestrator: k8s, pod: web-0, endpoint: eth0, ipNetworks: [10.0.0.5/32]}"));
        var out = validator.defaultAndValidate(wep);
        assertThat(out.metadata().name()).isEqualTo("node--1-k8s-web--0-eth0");
        assertThat(out.metadata().labels()).containsEntry("app", "web")
                .containsEntry("projectcalico.org/namespace", "prod")
                .containsEntry("projectcalico.org/orchestrator", "k8s");
        assertThat(WorkloadEndpointValidator.splitName(out.metadata().name()))
                .containsExactly("node-1", "k8s", "web-0", "eth0");
    }

    @Test
    void inputIsNotModified() {
        var in = (GlobalNetworkPolicy) Yaml.parse(Yaml.gnp("{egress: [{action: Allow}]}"));
        var out = validator.defaultAndValidate(in);
        assertThat(in.spec().types()).isEmpty();
        assertThat(in.spec().tier()).isNull();
        assertThat(out).isNotSameAs(in);
        assertThat(out.spec().types()).containsExactly(PolicyType.Egress);
    }

    @Test
    void validationSeesDefaults() {
        // preDNAT with only egress rules defaults to types [Egress], which a preDNAT policy may not have.
        var p = new GlobalNetworkPolicy(ObjectMeta.named("p"), new GlobalNetworkPolicySpec(null, null, null,
                List.of(calico.api.model.Rule.deny()), null, null, null, true, true, null, null, null));
        assertThatThrownBy(() -> validator.defaultAndValidate(p))
                .isInstanceOfSatisfying(ValidationException.class, e -> assertThat(e.errors())
                        .extracting(FieldError::field).containsExactly("spec.egress", "spec.types"));
    }
}
