package calico.api.validation;

import calico.api.model.ObjectMeta;
import calico.api.model.WorkloadEndpoint;
import calico.api.model.WorkloadEndpointSpec;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Defaults and checks workload endpoints. Calico names an endpoint after its identifiers,
 * {@code <node>-<orchestrator>-<workload>-<endpoint>} with each dash inside a part doubled
 * (for k8s the workload part is the pod, for cni the container ID); the name is derived when
 * absent and must agree with the identifiers when given.
 */
final class WorkloadEndpointValidator {

    static final String NAMESPACE_LABEL = "projectcalico.org/namespace";
    static final String ORCHESTRATOR_LABEL = "projectcalico.org/orchestrator";

    private static final Pattern MAC = Pattern.compile(
            "([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}|([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}"
                    + "|([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}"
                    + "|([0-9a-fA-F]{4}\\.){2}[0-9a-fA-F]{4}|([0-9a-fA-F]{4}\\.){3}[0-9a-fA-F]{4}"
                    + "|([0-9a-fA-F]{4}\\.){9}[0-9a-fA-F]{4}");
    private static final FieldPath SPEC = FieldPath.of("spec");

    /** One part of the endpoint's name and the spec field it comes from. */
    private record Segment(String field, String value) {
    }

    private WorkloadEndpointValidator() {
    }

    /** Derives a missing name from the identifiers, and stamps the namespace/orchestrator labels. */
    static WorkloadEndpoint defaults(WorkloadEndpoint wep) {
        ObjectMeta meta = wep.metadata();
        WorkloadEndpointSpec spec = wep.spec();
        if (meta == null || spec == null) {
            return wep;
        }
        if (meta.name() == null || meta.name().isEmpty()) {
            String name = expectedName(spec);
            if (name != null) {
                meta = meta.withName(name);
            }
        }
        Map<String, String> labels = new HashMap<>(meta.labels());
        if (meta.namespace() != null && !meta.namespace().isEmpty()) {
            labels.put(NAMESPACE_LABEL, meta.namespace());
        }
        if (spec.orchestrator() != null && !spec.orchestrator().isEmpty()) {
            labels.put(ORCHESTRATOR_LABEL, spec.orchestrator());
        }
        return new WorkloadEndpoint(meta.withLabels(labels), spec);
    }

    static void validate(WorkloadEndpoint wep, Errors errors) {
        MetadataValidator.validate(wep.metadata(), wep.resourceKind(), true, errors);
        WorkloadEndpointSpec s = wep.spec();
        if (s == null) {
            errors.add(SPEC, "is required");
            return;
        }
        identifiers(wep, errors);
        name(s.orchestrator(), "orchestrator", errors);
        name(s.workload(), "workload", errors);
        name(s.node(), "node", errors);
        name(s.pod(), "pod", errors);
        name(s.endpoint(), "endpoint", errors);
        if (notEmpty(s.containerID()) && Names.containerId(s.containerID()) != null) {
            errors.add(SPEC.field("containerID"), Names.containerId(s.containerID()));
        }
        List<Cidr> networks = new ArrayList<>();
        for (int i = 0; i < s.ipNetworks().size(); i++) {
            FieldPath p = SPEC.field("ipNetworks").index(i);
            Optional<Cidr> c = Cidrs.cidrOrIp(s.ipNetworks().get(i), p, errors);
            if (c.isPresent()) {
                if (c.get().prefixLength() != c.get().address().bits()) {
                    errors.add(p, "must be a single address (/32 or /128); the network contains several");
                }
                networks.add(c.get());
            }
        }
        if (notEmpty(s.ipv4Gateway())) {
            Cidrs.ip(s.ipv4Gateway(), 4, SPEC.field("ipv4Gateway"), errors);
        }
        if (notEmpty(s.ipv6Gateway())) {
            Cidrs.ip(s.ipv6Gateway(), 6, SPEC.field("ipv6Gateway"), errors);
        }
        for (int i = 0; i < s.ipNATs().size(); i++) {
            nat(s.ipNATs().get(i), networks, SPEC.field("ipNATs").index(i), errors);
        }
        for (int i = 0; i < s.profiles().size(); i++) {
            String bad = Names.dnsSubdomain(s.profiles().get(i));
            if (bad != null) {
                errors.add(SPEC.field("profiles").index(i), bad);
            }
        }
        if (notEmpty(s.interfaceName())) {
            String bad = Names.interfaceName(s.interfaceName(), true);
            if (bad != null) {
                errors.add(SPEC.field("interfaceName"), bad);
            }
        }
        if (notEmpty(s.mac()) && !MAC.matcher(s.mac()).matches()) {
            errors.add(SPEC.field("mac"), "invalid MAC address \"" + s.mac() + "\"");
        }
        for (int i = 0; i < s.ports().size(); i++) {
            port(s.ports().get(i), SPEC.field("ports").index(i), errors);
        }
        Cidrs.cidrsOrIps(s.allowSpoofedSourcePrefixes(), SPEC.field("allowSpoofedSourcePrefixes"), errors);
    }

    /** {@return the name Calico gives an endpoint with these identifiers}, or null if some are missing. */
    static String expectedName(WorkloadEndpointSpec s) {
        List<Segment> segments = segments(s);
        List<String> parts = new ArrayList<>();
        for (Segment seg : segments) {
            if (!notEmpty(seg.value()) || seg.value().startsWith("-") || seg.value().endsWith("-")) {
                return null;
            }
            parts.add(seg.value().replace("-", "--"));
        }
        return String.join("-", parts);
    }

    private static List<Segment> segments(WorkloadEndpointSpec s) {
        Segment node = new Segment("node", s.node());
        Segment orch = new Segment("orchestrator", s.orchestrator());
        Segment endpoint = new Segment("endpoint", s.endpoint());
        String o = s.orchestrator() == null ? "" : s.orchestrator();
        Segment workload = switch (o) {
            case "k8s" -> new Segment("pod", s.pod());
            case "cni" -> new Segment("containerID", s.containerID());
            case "libnetwork" -> orch;
            default -> new Segment("workload", s.workload());
        };
        return List.of(node, orch, workload, endpoint);
    }

    private static void identifiers(WorkloadEndpoint wep, Errors errors) {
        WorkloadEndpointSpec s = wep.spec();
        if (!notEmpty(s.node())) {
            errors.add(SPEC.field("node"), "is required");
        }
        List<Segment> segments = segments(s);
        for (Segment seg : segments) {
            if (notEmpty(seg.value()) && (seg.value().startsWith("-") || seg.value().endsWith("-"))) {
                errors.add(SPEC.field(seg.field()), "must not begin or end with '-' (it is part of the endpoint's name)");
            }
        }
        String name = wep.metadata() == null ? null : wep.metadata().name();
        if (!notEmpty(name)) {
            List<String> missing = segments.stream().filter(seg -> !notEmpty(seg.value()))
                    .map(Segment::field).distinct().toList();
            if (!missing.isEmpty()) {
                errors.add(FieldPath.of("metadata").field("name"), "cannot be derived: set " + String.join(", ", missing));
            }
            return;
        }
        List<String> parts = splitName(name);
        boolean matches = parts.size() == segments.size();
        for (int i = 0; matches && i < segments.size(); i++) {
            String v = segments.get(i).value();
            matches = !notEmpty(v) || v.equals(parts.get(i));
        }
        if (!matches) {
            String expected = expectedName(s);
            errors.add(FieldPath.of("metadata").field("name"), "does not match the endpoint's identifiers"
                    + (expected != null ? ": expected " + expected
                    : ": expected <node>-<orchestrator>-<workload>-<endpoint> with dashes inside parts doubled"));
        }
    }

    /** Splits on single dashes; a double dash is an escaped dash inside a part. */
    static List<String> splitName(String name) {
        List<String> parts = new ArrayList<>();
        int start = 0;
        for (int i = 1; i < name.length(); i++) {
            if (name.charAt(i) != '-') {
                continue;
            }
            if (i + 1 < name.length() && name.charAt(i + 1) == '-') {
                i++;
                continue;
            }
            parts.add(name.substring(start, i).replace("--", "-"));
            start = i + 1;
        }
        parts.add(name.substring(start).replace("--", "-"));
        return parts;
    }

    private static void name(String value, String field, Errors errors) {
        if (notEmpty(value)) {
            String bad = Names.dnsSubdomain(value);
            if (bad != null) {
                errors.add(SPEC.field(field), bad);
            }
        }
    }

    private static void nat(WorkloadEndpointSpec.IpNat nat, List<Cidr> networks, FieldPath path, Errors errors) {
        if (nat == null) {
            errors.add(path, "must not be null");
            return;
        }
        Optional<IpAddress> internal = Cidrs.ip(nat.internalIP(), 0, path.field("internalIP"), errors);
        Optional<IpAddress> external = Cidrs.ip(nat.externalIP(), 0, path.field("externalIP"), errors);
        if (internal.isPresent() && external.isPresent() && internal.get().version() != external.get().version()) {
            errors.add(path.field("externalIP"), "must be the same IP version as internalIP");
        }
        if (internal.isPresent() && networks.stream().noneMatch(n -> n.contains(internal.get()))) {
            errors.add(path.field("internalIP"), "must be one of the endpoint's ipNetworks");
        }
    }

    private static void port(WorkloadEndpointSpec.EndpointPort p, FieldPath path, Errors errors) {
        if (p == null) {
            errors.add(path, "must not be null");
            return;
        }
        boolean hasHostPort = p.hostPort() != null && p.hostPort() != 0;
        if (notEmpty(p.name())) {
            String bad = Names.portName(p.name());
            if (bad != null) {
                errors.add(path.field("name"), bad);
            }
        } else if (!hasHostPort) {
            errors.add(path.field("name"), "is required unless hostPort is set");
        }
        if (p.protocol() == null) {
            errors.add(path.field("protocol"), "is required: TCP, UDP or SCTP");
        } else {
            RuleValidator.protocol(p.protocol(), path.field("protocol"), errors);
            if (!p.protocol().supportsPorts()) {
                errors.add(path.field("protocol"), "must be TCP, UDP or SCTP (a protocol with ports)");
            }
        }
        if (p.port() == null || p.port() < 1 || p.port() > 65535) {
            errors.add(path.field("port"), "must be between 1 and 65535");
        }
        if (p.hostPort() != null && (p.hostPort() < 0 || p.hostPort() > 65535)) {
            errors.add(path.field("hostPort"), "must be between 0 and 65535");
        }
        if (notEmpty(p.hostIP())) {
            Cidrs.ip(p.hostIP(), 0, path.field("hostIP"), errors);
        }
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }
}
