package calico.confd;

import calico.api.model.Resource;
import calico.confd.model.BgpStore;
import calico.confd.model.BgpView;
import calico.confd.model.ServiceInfo;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Builds a {@link BgpView} the way the syncer would: through {@link BgpStore}. */
public final class ViewBuilder {

    private final List<Update> updates = new ArrayList<>();
    private final Map<String, ServiceInfo> services = new TreeMap<>();

    public ViewBuilder add(Resource... resources) {
        for (Resource r : resources) {
            updates.add(Update.of(UpdateType.NEW, r, 1));
        }
        return this;
    }

    /** Kubernetes Services as their watch would hand them on. */
    public ViewBuilder services(Map<String, ServiceInfo> all) {
        services.putAll(all);
        return this;
    }

    public BgpView build() {
        BgpStore store = new BgpStore();
        store.apply(updates);
        store.setServices(services);
        return store.view();
    }
}
