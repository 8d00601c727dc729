package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/** The source or destination half of a {@link Rule}. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record EntityRule(
        List<String> nets,
        String selector,
        String namespaceSelector,
        List<Port> ports,
        List<String> notNets,
        String notSelector,
        List<Port> notPorts,
        ServiceAccountMatch serviceAccounts,
        ServiceMatch services) {

    public EntityRule {
        nets = nets == null ? List.of() : List.copyOf(nets);
        ports = ports == null ? List.of() : List.copyOf(ports);
        notNets = notNets == null ? List.of() : List.copyOf(notNets);
        notPorts = notPorts == null ? List.of() : List.copyOf(notPorts);
    }

    public static EntityRule empty() {
        return new EntityRule(null, null, null, null, null, null, null, null, null);
    }

    public EntityRule withSelector(String s) {
        return new EntityRule(nets, s, namespaceSelector, ports, notNets, notSelector, notPorts, serviceAccounts, services);
    }

    public EntityRule withNamespaceSelector(String s) {
        return new EntityRule(nets, selector, s, ports, notNets, notSelector, notPorts, serviceAccounts, services);
    }

    public EntityRule withNets(List<String> n) {
        return new EntityRule(n, selector, namespaceSelector, ports, notNets, notSelector, notPorts, serviceAccounts, services);
    }

    public EntityRule withPorts(List<Port> p) {
        return new EntityRule(nets, selector, namespaceSelector, p, notNets, notSelector, notPorts, serviceAccounts, services);
    }

    public EntityRule withNotNets(List<String> n) {
        return new EntityRule(nets, selector, namespaceSelector, ports, n, notSelector, notPorts, serviceAccounts, services);
    }

    /** Matches endpoints by service account name and/or a selector over service-account labels. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record ServiceAccountMatch(List<String> names, String selector) {
        public ServiceAccountMatch {
            names = names == null ? List.of() : List.copyOf(names);
        }
    }

    /** Matches the endpoints of a Kubernetes Service. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ServiceMatch(String name, String namespace) {
    }
}
