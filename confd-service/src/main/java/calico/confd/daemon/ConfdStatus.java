package calico.confd.daemon;

import calico.confd.render.Session;
import calico.confd.render.Skipped;
import java.time.Instant;
import java.util.List;

/**
 * The outcome of the last render-validate-reload pass.
 *
 * @param generation  counts passes that changed BIRD's configuration (Installed and reloaded)
 * @param result      what the last pass did
 * @param message     why, for anything but {@code RELOADED}/{@code UNCHANGED}
 * @param at          when the last pass ran
 * @param sessions    the sessions in the configuration BIRD runs (the last good one)
 * @param skipped     what the last render left out, and why
 */
public record ConfdStatus(long generation, Result result, String message, Instant at, List<Session> sessions,
                          List<Skipped> skipped) {

    public ConfdStatus {
        sessions = List.copyOf(sessions);
        skipped = List.copyOf(skipped);
    }

    /** What a pass ended with. */
    public enum Result {
        /** No pass yet (waiting for the datastore to be in sync). */
        WAITING,
        /** A new configuration was installed and BIRD re-read it. */
        RELOADED,
        /** The rendered configuration equals the installed one. */
        UNCHANGED,
        /** Nothing could be rendered (this node is missing or has no BGP address); the last config stays. */
        REFUSED,
        /** BIRD rejected the new configuration ({@code bird -p}); the last good config stays. */
        REJECTED,
        /** The configuration was installed but BIRD could not be told (not running yet?); retried. */
        RELOAD_FAILED
    }

    static ConfdStatus waiting() {
        return new ConfdStatus(0, Result.WAITING, "waiting for the datastore", Instant.now(), List.of(), List.of());
    }
}
