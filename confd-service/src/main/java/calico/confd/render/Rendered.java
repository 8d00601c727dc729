package calico.confd.render;

import java.util.List;

/**
 * The outcome of one render: BIRD's configuration text, the sessions in it, and what was
 * skipped (with reasons).
 */
public record Rendered(String config, List<Session> sessions, List<Skipped> skipped) {

    public Rendered {
        sessions = List.copyOf(sessions);
        skipped = List.copyOf(skipped);
    }
}
