package calico.api.validation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.GlobalNetworkPolicy;
import calico.api.model.GlobalNetworkPolicySpec;
import calico.api.model.NetworkPolicy;
import calico.api.model.ObjectMeta;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every error of a resource is reported at once, and the options change exactly what they say. */
class ValidationExceptionTest {

    @Test
    void reportsAllErrorsOfAResourceTogether() {
        String yaml = Yaml.resource("GlobalNetworkPolicy", "{name: p, labels: {\"a b\": c}}", """
                {tier: t1, types: [Ingress, Ingress], doNotTrack: true,
                 ingress: [{protocol: TCPX, destination: {ports: [0]}},
                           {action: Allow, protocol: ICMP, icmp: {code: 3}, source: {nets: [10.0.0.0/33]}}],
                 egress: [{action: Deny, http: {methods: [GET]}}]}""");
        assertThatThrownBy(() -> ResourceValidator.get().defaultAndValidate(Yaml.parse(yaml)))
                .isInstanceOfSatisfying(ValidationException.class, e -> {
                    assertThat(e.resource()).isEqualTo("GlobalNetworkPolicy(p)");
                    assertThat(e.errors()).extracting(FieldError::field).containsExactly(
                            "metadata.labels[a b]",
                            "metadata.name",
                            "spec.types[1]",
                            "spec.ingress[0].action",
                            "spec.ingress[0].protocol",
                            "spec.ingress[0].destination.ports",
                            "spec.ingress[0].destination.ports[0]",
                            "spec.ingress[1].icmp.code",
                            "spec.ingress[1].source.nets[0]",
                            "spec.egress[0].http",
                            "spec.egress[0].http",
                            "spec.applyOnForward");
                    assertThat(e.getMessage()).startsWith("GlobalNetworkPolicy(p) is invalid: metadata.labels[a b]: ")
                            .contains("; spec.ingress[0].protocol: unknown protocol \"TCPX\"");
                });
    }

    @Test
    void namesTheResourceEvenWithoutAName() {
        var p = new GlobalNetworkPolicy(new ObjectMeta(null, null, null, null, null, null, null, null, null, null,
                null, null), null);
        assertThatThrownBy(() -> ResourceValidator.get().defaultAndValidate(p))
                .isInstanceOfSatisfying(ValidationException.class, e -> {
                    assertThat(e.resource()).isEqualTo("GlobalNetworkPolicy(<no name>)");
                    assertThat(e.errors()).containsExactly(new FieldError("metadata.name", "is required"));
                });
        assertThatThrownBy(() -> ResourceValidator.get().defaultAndValidate(new GlobalNetworkPolicy(null, null)))
                .isInstanceOfSatisfying(ValidationException.class,
                        e -> assertThat(e.errors()).containsExactly(new FieldError("metadata", "is required")));
    }

    @Test
    void orderMustBeFinite() {
        var p = new GlobalNetworkPolicy(ObjectMeta.named("p"), new GlobalNetworkPolicySpec(null, Double.NaN, null,
                null, null, null, null, null, null, null, null, null));
        assertThat(Yaml.errors(p, ResourceValidator.get()))
                .containsExactly(new FieldError("spec.order", "must be a finite number"));
    }

    @Test
    void unprefixedNamingAcceptsAnyTier() {
        var relaxed = ResourceValidator.with(new ValidationOptions(PolicyNaming.UNPREFIXED_ALLOWED, false));
        var p = Yaml.parse(Yaml.resource("GlobalNetworkPolicy", "{name: p}", "{tier: t1}"));
        assertThat(Yaml.errors(p, relaxed)).isEmpty();
        assertThat(Yaml.errors(p, ResourceValidator.get())).extracting(FieldError::field).containsExactly("metadata.name");
        // The name format still applies.
        var bad = Yaml.parse(Yaml.resource("GlobalNetworkPolicy", "{name: a.b.c}", "{tier: t1}"));
        assertThat(Yaml.errors(bad, relaxed)).extracting(FieldError::field).containsExactly("metadata.name");
    }

    @Test
    void convertedKubernetesPolicyNamesNeedTheOption() {
        var converter = ResourceValidator.with(new ValidationOptions(PolicyNaming.TIER_PREFIXED, true));
        var knp = (NetworkPolicy) Yaml.parse(Yaml.resource("NetworkPolicy", "{name: knp.default.web, namespace: ns}",
                "{order: 1000}"));
        assertThat(Yaml.errors(knp, converter)).isEmpty();
        assertThat(Yaml.errors(knp, ResourceValidator.get())).hasSize(1);
        var wrongTier = Yaml.parse(Yaml.resource("NetworkPolicy", "{name: knp.default.web, namespace: ns}", "{tier: t1}"));
        assertThat(Yaml.errors(wrongTier, converter))
                .containsExactly(new FieldError("metadata.name", "policies named 'knp.default....' belong to tier default, not t1"));
        assertThat(ResourceValidator.with(ValidationOptions.DEFAULT)).isSameAs(ResourceValidator.get());
    }

    @Test
    void convertedAdminPolicyNamesNeedTheOptionAndTheirTier() {
        var converter = ResourceValidator.with(new ValidationOptions(PolicyNaming.TIER_PREFIXED, true));
        var anp = Yaml.parse(Yaml.resource("GlobalNetworkPolicy", "{name: kanp.adminnetworkpolicy.cluster.control}",
                "{tier: kube-admin, order: 10}"));
        assertThat(Yaml.errors(anp, converter)).isEmpty();
        assertThat(Yaml.errors(anp, ResourceValidator.get())).containsExactly(new FieldError("metadata.name",
                "the prefix 'kanp.adminnetworkpolicy.' is reserved for policies converted from AdminNetworkPolicies"));
        var banp = Yaml.parse(Yaml.resource("GlobalNetworkPolicy", "{name: kbanp.baselineadminnetworkpolicy.default}",
                "{tier: default}"));
        assertThat(Yaml.errors(banp, converter)).containsExactly(new FieldError("metadata.name",
                "policies named 'kbanp.baselineadminnetworkpolicy....' belong to tier kube-baseline, not default"));
    }

    @Test
    void errorListIsImmutable() {
        var e = new ValidationException("x", new java.util.ArrayList<>(List.of(new FieldError("a", "b"))));
        assertThatThrownBy(() -> e.errors().add(new FieldError("c", "d"))).isInstanceOf(UnsupportedOperationException.class);
    }
}
