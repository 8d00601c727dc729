package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import java.util.List;

/**
 * The in-memory dataplane (only when asked for: {@code felix.dataplane-driver=model}; the default is the kernel): folds
 * every batch into its {@link DataplaneModel} on the caller's thread and programs nothing. The
 * model checks the graph's output protocol; its violations are this dataplane's errors.
 */
public final class ModelDataplane implements Dataplane {

    private final DataplaneModel model = new DataplaneModel();

    @Override
    public void apply(List<DataplaneUpdate> batch) {
        model.apply(batch);
    }

    @Override
    public boolean inSync() {
        return model.read(DataplaneModel::inSync);
    }

    @Override
    public DataplaneModel model() {
        return model;
    }

    @Override
    public List<String> errors() {
        return model.errors();
    }
}
