package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.Dataplane;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.List;
import java.util.function.Consumer;

/**
 * The dataplane and the listeners beside it (flow logs). What is programmed is the dataplane's
 * one {@link DataplaneModel}: the admin API and the metrics read it, there is no mirror.
 */
public record ProgrammedState(Dataplane dataplane, List<Consumer<List<DataplaneUpdate>>> listeners) {

    public ProgrammedState {
        listeners = List.copyOf(listeners);
    }

    public static ProgrammedState of(Dataplane dataplane) {
        return of(dataplane, List.of());
    }

    /**
     * With {@code listeners} fed every batch before the dataplane (flow logs index the lookups and
     * start collecting on their config, and must be listening before the rules that log to them
     * are programmed).
     */
    public static ProgrammedState of(Dataplane dataplane, List<Consumer<List<DataplaneUpdate>>> listeners) {
        return new ProgrammedState(dataplane, listeners);
    }

    /** {@return the dataplane's model} (read it from here through {@link DataplaneModel#read}) */
    public DataplaneModel model() {
        return dataplane.model();
    }

    /**
     * Listeners get the whole batch; the dataplane gets it without the flow-log lookups, which
     * describe nothing to program (a batch of lookups only reaches no dataplane).
     */
    void apply(List<DataplaneUpdate> batch) {
        listeners.forEach(l -> l.accept(batch));
        List<DataplaneUpdate> programmed = withoutLookups(batch);
        if (!programmed.isEmpty()) {
            dataplane.apply(programmed);
        }
    }

    /** {@return the settings of the last ConfigUpdate in {@code batch}}, null when it has none (for listeners). */
    static calico.felix.calc.FelixSettings lastConfig(List<DataplaneUpdate> batch) {
        for (int i = batch.size() - 1; i >= 0; i--) {
            if (batch.get(i) instanceof DataplaneUpdate.ConfigUpdate c) {
                return c.settings();
            }
        }
        return null;
    }

    static List<DataplaneUpdate> withoutLookups(List<DataplaneUpdate> batch) {
        if (batch.stream().noneMatch(u -> u instanceof DataplaneUpdate.FlowLookup)) {
            return batch;
        }
        return batch.stream().filter(u -> !(u instanceof DataplaneUpdate.FlowLookup)).toList();
    }

    List<String> errors() {
        return dataplane.errors();
    }
}
