package calico.felix.calc;

import static calico.felix.calc.Res.gnp;
import static calico.felix.calc.Res.labels;
import static calico.felix.calc.Res.np;
import static calico.felix.calc.Res.tier;
import static calico.felix.calc.Res.wep;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.EntityRule;
import calico.api.model.KubernetesEndpointSlice;
import calico.api.model.KubernetesEndpointSliceSpec;
import calico.api.model.KubernetesEndpointSliceSpec.Endpoint;
import calico.api.model.KubernetesEndpointSliceSpec.EndpointPort;
import calico.api.model.ObjectMeta;
import calico.api.model.PolicyType;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Rule;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Rules' {@code services} matches through the whole graph: a destination match is a set of the
 * Service's endpoints' (address, protocol, port), a source match a set of their addresses, both
 * from EndpointSlices and kept current as the slices change; only while a rule using them is
 * active on this node. Where the datastore has no Services (etcd) the match matches nothing: an
 * Allow allows nothing, a Deny denies nothing, and each rule is reported once.
 */
class ServiceMatchesTest {

    private static final String ME = "n1";
    private static final String TO_API = IpSetSpec.service("shop", "api", true).id();
    private static final String FROM_API = IpSetSpec.service("shop", "api", false).id();

    private static Rule toService(Rule r, String name, String namespace) {
        return r.withDestination(new EntityRule(null, null, null, null, null, null, null, null,
                new EntityRule.ServiceMatch(name, namespace)));
    }

    private static Rule fromService(Rule r, String name, String namespace) {
        return r.withSource(new EntityRule(null, null, null, null, null, null, null, null,
                new EntityRule.ServiceMatch(name, namespace)));
    }

    /** An EndpointSlice of {@code service} in {@code ns}: TCP 80 named http and UDP 53, one endpoint per address. */
    private static KubernetesEndpointSlice slice(String ns, String name, String service, String... addresses) {
        return new KubernetesEndpointSlice(ObjectMeta.namespaced(ns, name).withLabels(
                Map.of(KubernetesEndpointSliceSpec.SERVICE_NAME_LABEL, service)),
                new KubernetesEndpointSliceSpec(service, Arrays.stream(addresses).map(a -> new Endpoint(List.of(a)))
                        .toList(), List.of(new EndpointPort("http", "TCP", 80), new EndpointPort("", "UDP", 53),
                        new EndpointPort("any", "TCP", null))));
    }

    private static ResourceKey sliceKey(String ns, String name) {
        return ResourceKey.of(ResourceKind.KUBERNETES_ENDPOINT_SLICE, ns, name);
    }

    /** client (local, shop) may talk only to the service api (egress); a is api's endpoint, b is not. */
    private static Harness clientToApi(Harness h) {
        return h.put(tier("default", null, null),
                wep("shop", "client", ME, "10.0.0.1", labels("app", "client")),
                wep("shop", "a", "n2", "10.0.0.2", labels("app", "a")),
                wep("shop", "b", "n2", "10.0.0.3", labels("app", "b")),
                np("shop", "to-api", null, 1.0, "app == 'client'", List.of(),
                        List.of(toService(Rule.allow(), "api", null)), PolicyType.Egress));
    }

    @Test
    void aDestinationServiceMatchesItsEndpointsAddressesAndPorts() {
        Harness h = clientToApi(new Harness(ME)).put(slice("shop", "api-1", "api", "10.0.0.2"));
        assertThat(h.state.ipSets.get(TO_API).type()).isEqualTo(IpSetType.IP_AND_PORT);
        // the policy's namespace stands in for the match's; the port without a number contributes nothing
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.2,tcp:80", "10.0.0.2,udp:53");
        Verdicts v = new Verdicts(h.state);
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 80)).isTrue();
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 8080)).as("a port the service lacks").isFalse();
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.3", 80)).as("not an endpoint").isFalse();
    }

    @Test
    void theSetFollowsTheEndpointSlices() {
        Harness h = clientToApi(new Harness(ME)).put(slice("shop", "api-1", "api", "10.0.0.2"));
        // The endpoint moves from a to b: one delta, the new member in, the old out.
        h.put(slice("shop", "api-1", "api", "10.0.0.3"));
        assertThat(h.lastPolicyUpdates()).singleElement().isInstanceOf(DataplaneUpdate.IpSetDeltaUpdate.class);
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.3,tcp:80", "10.0.0.3,udp:53");
        Verdicts v = new Verdicts(h.state);
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.3", 80)).isTrue();
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 80)).isFalse();
        // A second slice of the same service adds; an address in both stays until both drop it.
        h.put(slice("shop", "api-2", "api", "10.0.0.3", "10.0.0.4"));
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.3,tcp:80", "10.0.0.3,udp:53",
                "10.0.0.4,tcp:80", "10.0.0.4,udp:53");
        h.delete(sliceKey("shop", "api-1"));
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.3,tcp:80", "10.0.0.3,udp:53",
                "10.0.0.4,tcp:80", "10.0.0.4,udp:53");
        // Slices of a same-named service elsewhere, or of another service here, are not api's.
        h.put(slice("other", "api-1", "api", "10.0.0.9"), slice("shop", "web-1", "web", "10.0.0.8"));
        assertThat(h.state.members(TO_API)).hasSize(4);
        // A slice relabelled to another service leaves this one.
        h.put(slice("shop", "api-2", "web", "10.0.0.3", "10.0.0.4"));
        assertThat(h.state.members(TO_API)).isEmpty();
    }

    @Test
    void aSourceServiceMatchesItsEndpointsAddressesOnly() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("shop", "db", ME, "10.0.0.5", labels("app", "db")),
                slice("shop", "api-1", "api", "10.0.0.2", "fd00::2"),
                gnp("from-api", "default", 1.0, "app == 'db'", List.of(fromService(Rule.allow(), "api", "shop")),
                        List.of()));
        assertThat(h.state.ipSets.get(FROM_API).type()).isEqualTo(IpSetType.NET);
        assertThat(h.state.members(FROM_API)).containsExactly("10.0.0.2/32", "fd00::2/128");
        Verdicts v = new Verdicts(h.state);
        assertThat(v.ingressAllowed("shop/db", "10.0.0.2", "10.0.0.5", 5432)).as("any port").isTrue();
        assertThat(v.ingressAllowed("shop/db", "10.0.0.3", "10.0.0.5", 5432)).isFalse();
    }

    @Test
    void setsExistOnlyWhileAnActiveRuleUsesThem() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("shop", "client", "n2", "10.0.0.1", labels("app", "client")),
                slice("shop", "api-1", "api", "10.0.0.2"),
                np("shop", "to-api", null, 1.0, "app == 'client'", List.of(),
                        List.of(toService(Rule.allow(), "api", "shop")), PolicyType.Egress));
        assertThat(h.state.ipSets).isEmpty(); // the policy selects no local endpoint
        h.put(wep("shop", "client", ME, "10.0.0.1", labels("app", "client")));
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.2,tcp:80", "10.0.0.2,udp:53");
        h.delete(ResourceKey.of(ResourceKind.NETWORK_POLICY, "shop", "to-api"));
        assertThat(h.state.ipSets).isEmpty();
        // slice changes meanwhile are only indexed, and counted when the rule comes back
        h.put(slice("shop", "api-1", "api", "10.0.0.7"),
                np("shop", "to-api", null, 1.0, "app == 'client'", List.of(),
                        List.of(toService(Rule.allow(), "api", "shop")), PolicyType.Egress));
        assertThat(h.state.members(TO_API)).containsExactly("10.0.0.7,tcp:80", "10.0.0.7,udp:53");
    }

    @Test
    void aDenyWithServicesDeniesOnlyTheServicesEndpoints() {
        Harness h = new Harness(ME).put(tier("default", null, null),
                wep("shop", "client", ME, "10.0.0.1", labels("app", "client")),
                slice("shop", "api-1", "api", "10.0.0.2"),
                np("shop", "not-api", null, 1.0, "app == 'client'", List.of(),
                        List.of(toService(Rule.deny(), "api", null), Rule.allow()), PolicyType.Egress));
        Verdicts v = new Verdicts(h.state);
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 80)).isFalse();
        assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.3", 80)).isTrue();
    }

    @Test
    void onADatastoreWithoutServicesTheMatchMatchesNothingAndIsReportedOncePerRule() {
        Logger log = (Logger) LoggerFactory.getLogger(RuleCompiler.class);
        ListAppender<ILoggingEvent> warnings = new ListAppender<>();
        warnings.start();
        log.addAppender(warnings);
        try {
            Harness h = new Harness(ME, false).put(tier("default", null, null),
                    wep("shop", "client", ME, "10.0.0.1", labels("app", "client")),
                    np("shop", "p", null, 1.0, "app == 'client'", List.of(),
                            List.of(toService(Rule.deny(), "db", null), toService(Rule.allow(), "api", null)),
                            PolicyType.Egress));
            Verdicts v = new Verdicts(h.state);
            assertThat(v.egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 80)).as("an Allow allows nothing").isFalse();
            assertThat(h.state.policies.values().iterator().next().outbound()).hasSize(2); // kept: flow logs name them
            // A Deny denies nothing: a later Allow is reached.
            h.put(np("shop", "p", null, 1.0, "app == 'client'", List.of(),
                    List.of(toService(Rule.deny(), "db", null), Rule.allow()), PolicyType.Egress));
            assertThat(new Verdicts(h.state).egressAllowed("shop/client", "10.0.0.1", "10.0.0.2", 80)).isTrue();
            // recompiled on every change, reported once per rule
            h.put(wep("shop", "client", ME, "10.0.0.1", labels("app", "client", "x", "y")));
            assertThat(warnings.list).extracting(ILoggingEvent::getFormattedMessage)
                    .filteredOn(m -> m.contains("services match matches nothing")).hasSize(2)
                    .anySatisfy(m -> assertThat(m).contains("egress rule 0"))
                    .anySatisfy(m -> assertThat(m).contains("egress rule 1"));
        } finally {
            log.detachAppender(warnings);
        }
    }
}
