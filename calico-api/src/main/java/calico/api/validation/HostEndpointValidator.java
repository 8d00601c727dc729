package calico.api.validation;

import calico.api.model.HostEndpoint;
import calico.api.model.HostEndpointSpec;

/** Checks host endpoints: a node, and an interface and/or expected IPs to find the endpoint by. */
final class HostEndpointValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");

    private HostEndpointValidator() {
    }

    static void validate(HostEndpoint hep, Errors errors) {
        MetadataValidator.validate(hep.metadata(), hep.resourceKind(), true, errors);
        HostEndpointSpec s = hep.spec();
        if (s == null) {
            errors.add(SPEC, "is required: set node and interfaceName or expectedIPs");
            return;
        }
        if (s.node() == null || s.node().isEmpty()) {
            errors.add(SPEC.field("node"), "is required");
        } else if (Names.dnsSubdomain(s.node()) != null) {
            errors.add(SPEC.field("node"), Names.dnsSubdomain(s.node()));
        }
        boolean hasInterface = s.interfaceName() != null && !s.interfaceName().isEmpty();
        if (!hasInterface && s.expectedIPs().isEmpty()) {
            errors.add(SPEC.field("interfaceName"), "set interfaceName, expectedIPs or both");
        }
        if (hasInterface) {
            String bad = Names.interfaceName(s.interfaceName(), true);
            if (bad != null) {
                errors.add(SPEC.field("interfaceName"), bad);
            }
        }
        for (int i = 0; i < s.expectedIPs().size(); i++) {
            Cidrs.ip(s.expectedIPs().get(i), 0, SPEC.field("expectedIPs").index(i), errors);
        }
        for (int i = 0; i < s.profiles().size(); i++) {
            String bad = Names.dnsSubdomain(s.profiles().get(i));
            if (bad != null) {
                errors.add(SPEC.field("profiles").index(i), bad);
            }
        }
        for (int i = 0; i < s.ports().size(); i++) {
            HostEndpointSpec.EndpointPort p = s.ports().get(i);
            FieldPath pp = SPEC.field("ports").index(i);
            if (p == null) {
                errors.add(pp, "must not be null");
                continue;
            }
            String badName = Names.portName(p.name());
            if (badName != null) {
                errors.add(pp.field("name"), badName);
            }
            if (p.protocol() == null) {
                errors.add(pp.field("protocol"), "is required: TCP, UDP or SCTP");
            } else {
                RuleValidator.protocol(p.protocol(), pp.field("protocol"), errors);
                if (!p.protocol().supportsPorts()) {
                    errors.add(pp.field("protocol"), "must be TCP, UDP or SCTP (a protocol with ports)");
                }
            }
            if (p.port() == null || p.port() < 1 || p.port() > 65535) {
                errors.add(pp.field("port"), "must be between 1 and 65535");
            }
        }
    }
}
