package calico.controllers.node;

import calico.api.model.KubeControllersConfigurationSpec;
import calico.api.net.Cidr;
import calico.api.selector.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code hostEndpoint.templates} entry, parsed: host endpoints named
 * {@code <node>-<generateName>-auto-hep} for the nodes {@code nodeSelector} selects, holding the node's
 * addresses inside {@code cidrs}; with an {@code interfacePattern}, one per matching interface of the
 * node instead. Its {@code labels} win over the node's.
 *
 * @param generateName     the name part ({@code ""} when the template gives none)
 * @param cidrs            the addresses the host endpoint may hold; empty: any (only with a pattern)
 * @param interfacePattern a regular expression matched against the node's interface names (found anywhere in
 *                         the name, as Go's {@code MatchString}); empty: one host endpoint without an interface
 *                         name. Kept as text so that equal settings are equal (a changed setting restarts the
 *                         node controller)
 * @param labels           added to the node's labels, winning over them
 * @param nodeSelector     the nodes that get the host endpoints ({@code all()} when the template gives none)
 */
public record HostEndpointTemplate(String generateName, List<Cidr> cidrs, Optional<String> interfacePattern,
                                   Map<String, String> labels, Selector nodeSelector) {

    private static final Logger LOG = LoggerFactory.getLogger(HostEndpointTemplate.class);

    public HostEndpointTemplate {
        cidrs = List.copyOf(cidrs);
        labels = Map.copyOf(labels);
    }

    /**
     * {@return the template of a resource's entry}, empty (with a warning) when a field is unusable: the
     * resource may have been written past validation (kubectl on the CRD), and a half-read template would
     * make host endpoints nobody asked for.
     */
    public static Optional<HostEndpointTemplate> of(KubeControllersConfigurationSpec.Template t) {
        String name = t.generateName() == null ? "" : t.generateName();
        try {
            List<Cidr> cidrs = new ArrayList<>();
            for (String c : t.interfaceCIDRs()) {
                cidrs.add(Cidr.parseCidrOrIp(c));
            }
            Optional<String> pattern = t.interfacePattern() == null || t.interfacePattern().isEmpty()
                    ? Optional.empty() : Optional.of(t.interfacePattern());
            pattern.ifPresent(Pattern::compile);
            if (cidrs.isEmpty() && pattern.isEmpty()) {
                throw new IllegalArgumentException("neither interfaceCIDRs nor interfacePattern is set");
            }
            Selector selector = t.nodeSelector() == null || t.nodeSelector().isBlank()
                    ? Selector.all() : Selector.parse(t.nodeSelector());
            return Optional.of(new HostEndpointTemplate(name, cidrs, pattern, t.labels(), selector));
        } catch (IllegalArgumentException e) { // also SelectorParseException, PatternSyntaxException
            LOG.warn("KubeControllersConfiguration default: host endpoint template \"{}\" ignored: {}", name, e.getMessage());
            return Optional.empty();
        }
    }

    /** {@return whether interface {@code name} is one of this template's}: always without a pattern. */
    boolean selectsInterface(String name) {
        return interfacePattern.map(p -> Pattern.compile(p).matcher(name).find()).orElse(true);
    }

    /** {@return whether {@code ip} (an address without prefix) may be in this template's host endpoints} */
    boolean admits(String ip) {
        if (cidrs.isEmpty()) {
            return true;
        }
        return Cidr.tryParseCidrOrIp(ip).map(c -> cidrs.stream().anyMatch(x -> x.contains(c.address()))).orElse(false);
    }
}
