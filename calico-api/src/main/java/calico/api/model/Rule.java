package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * One policy or profile rule. A packet matches when every present field matches; the
 * {@code not*} fields negate.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Rule(
        Action action,
        Integer ipVersion,
        Protocol protocol,
        @JsonProperty("icmp") IcmpFields icmp,
        Protocol notProtocol,
        @JsonProperty("notICMP") IcmpFields notICMP,
        EntityRule source,
        EntityRule destination,
        HttpMatch http,
        RuleMetadata metadata) {

    public static Rule allow() {
        return new Rule(Action.Allow, null, null, null, null, null, null, null, null, null);
    }

    public static Rule deny() {
        return new Rule(Action.Deny, null, null, null, null, null, null, null, null, null);
    }

    public Rule withProtocol(Protocol p) {
        return new Rule(action, ipVersion, p, icmp, notProtocol, notICMP, source, destination, http, metadata);
    }

    public Rule withSource(EntityRule e) {
        return new Rule(action, ipVersion, protocol, icmp, notProtocol, notICMP, e, destination, http, metadata);
    }

    public Rule withDestination(EntityRule e) {
        return new Rule(action, ipVersion, protocol, icmp, notProtocol, notICMP, source, e, http, metadata);
    }

    /** ICMP type and optional code. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record IcmpFields(Integer type, Integer code) {
    }

    /** Layer-7 HTTP match (applied by application-layer policy). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record HttpMatch(List<String> methods, List<HttpPath> paths) {
        public HttpMatch {
            methods = methods == null ? List.of() : List.copyOf(methods);
            paths = paths == null ? List.of() : List.copyOf(paths);
        }
    }

    /** An HTTP path match: exactly one of {@code exact} or {@code prefix}. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record HttpPath(String exact, String prefix) {
    }

    /** Free-form annotations carried with the rule. */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record RuleMetadata(Map<String, String> annotations) {
        public RuleMetadata {
            annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
        }
    }
}
