package calico.node.startup.steps;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What one start-up wrote, in order (logged as it happens); empty when it wrote nothing. */
final class Changes {

    private static final Logger LOG = LoggerFactory.getLogger(Changes.class);

    private final List<String> made = new ArrayList<>();

    void add(String change) {
        LOG.info("{}", change);
        made.add(change);
    }

    List<String> list() {
        return List.copyOf(made);
    }
}
