package calico.api.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What a {@link CalicoNodeStatus} asks for.
 *
 * @param node                the node whose calico-node reports
 * @param classes             which parts to report: {@code Agent}, {@code BGP}, {@code Routes}
 * @param updatePeriodSeconds how often, 0..86400; 0 stops the updates (the last status stays)
 */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record CalicoNodeStatusSpec(String node, List<String> classes, Integer updatePeriodSeconds) {

    public static final String AGENT = "Agent";
    public static final String BGP = "BGP";
    public static final String ROUTES = "Routes";
    /** The classes Calico knows, in its order. */
    public static final List<String> CLASSES = List.of(AGENT, BGP, ROUTES);
    /** One day: Calico's largest update period. */
    public static final int MAX_UPDATE_PERIOD_SECONDS = 86_400;

    public CalicoNodeStatusSpec {
        classes = classes == null ? List.of() : List.copyOf(classes);
    }

    /** {@return whether the class is requested} */
    public boolean wants(String cls) {
        return classes.contains(cls);
    }
}
