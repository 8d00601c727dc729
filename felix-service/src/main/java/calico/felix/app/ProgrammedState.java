package calico.felix.app;

import calico.felix.calc.DataplaneUpdate;
import java.util.List;
import java.util.function.Consumer;

/**
 * The dataplane plus the in-memory model that the admin API and metrics read. When the
 * dataplane is the model there is one copy; beside a real driver the model is a mirror fed the
 * same batches.
 */
public record ProgrammedState(Dataplane dataplane, ModelDataplane model,
                               List<Consumer<List<DataplaneUpdate>>> listeners) {

    public ProgrammedState {
        listeners = List.copyOf(listeners);
    }

    public static ProgrammedState of(Dataplane dataplane) {
        return of(dataplane, List.of());
    }

    /**
     * With {@code listeners} fed every batch before the dataplane (flow logs mirror the stream, and
     * must be listening before the rules that log to them are programmed).
     */
    public static ProgrammedState of(Dataplane dataplane, List<Consumer<List<DataplaneUpdate>>> listeners) {
        return new ProgrammedState(dataplane, dataplane instanceof ModelDataplane m ? m : new ModelDataplane(),
                listeners);
    }

    /**
     * Listeners get the whole batch; the dataplane and the model get it without the flow-log
     * lookups, which describe nothing to program (a batch of lookups only reaches no driver).
     */
    void apply(List<DataplaneUpdate> batch) {
        listeners.forEach(l -> l.accept(batch));
        List<DataplaneUpdate> programmed = withoutLookups(batch);
        if (programmed.isEmpty()) {
            return;
        }
        dataplane.apply(programmed);
        if (model != dataplane) {
            model.apply(programmed);
        }
    }

    static List<DataplaneUpdate> withoutLookups(List<DataplaneUpdate> batch) {
        if (batch.stream().noneMatch(u -> u instanceof DataplaneUpdate.FlowLookup)) {
            return batch;
        }
        return batch.stream().filter(u -> !(u instanceof DataplaneUpdate.FlowLookup)).toList();
    }

    List<String> errors() {
        if (model == dataplane) {
            return model.errors();
        }
        return java.util.stream.Stream.concat(dataplane.errors().stream(), model.errors().stream()).toList();
    }
}
