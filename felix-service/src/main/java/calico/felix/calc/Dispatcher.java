package calico.felix.calc;

import calico.api.model.ResourceKind;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The graph's entry: fans each syncer {@link Update} out to the stages registered for its kind,
 * in registration order, and tells status listeners when the syncer is in sync.
 *
 * <p>Like every node of the graph it is a plain synchronous object: one thread calls it, so no
 * stage needs a lock. A stage registers only for the kinds it consumes.
 */
public final class Dispatcher {

    /** A stage's input: one update of a kind it registered for ({@code value == null}: deleted). */
    @FunctionalInterface
    public interface UpdateHandler {
        void onUpdate(Update update);
    }

    /** A stage that wants to know when the initial snapshot is complete. */
    @FunctionalInterface
    public interface StatusHandler {
        void onStatus(SyncerStatus status);
    }

    private final Map<ResourceKind, List<UpdateHandler>> byKind = new EnumMap<>(ResourceKind.class);
    private final List<StatusHandler> statusHandlers = new ArrayList<>();

    public void register(ResourceKind kind, UpdateHandler handler) {
        byKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(handler);
    }

    public void registerStatus(StatusHandler handler) {
        statusHandlers.add(handler);
    }

    public void onUpdates(List<Update> updates) {
        for (Update u : updates) {
            for (UpdateHandler h : byKind.getOrDefault(u.key().kind(), List.of())) {
                h.onUpdate(u);
            }
        }
    }

    public void onStatus(SyncerStatus status) {
        for (StatusHandler h : statusHandlers) {
            h.onStatus(status);
        }
    }
}
