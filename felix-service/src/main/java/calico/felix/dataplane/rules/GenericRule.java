package calico.felix.dataplane.rules;

import java.util.List;
import java.util.Objects;

/**
 * One rule in a chain we own: ANDed {@code matches}, one {@code target}, and a comment saying
 * why it is there (rendered as {@code -m comment} / nft {@code comment}); formatters may
 * render one generic rule as several kernel rules when their syntax cannot express the matches
 * in one (iptables' 15-port multiport limit), never changing its meaning.
 */
public record GenericRule(List<Match> matches, Target target, String comment) {

    public GenericRule {
        matches = List.copyOf(matches);
        Objects.requireNonNull(target, "target");
    }

    public static GenericRule of(Target target, Match... matches) {
        return new GenericRule(List.of(matches), target, null);
    }

    public GenericRule withComment(String c) {
        return new GenericRule(matches, target, c);
    }
}
