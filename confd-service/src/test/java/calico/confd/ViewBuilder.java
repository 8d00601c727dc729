package calico.confd;

import calico.api.model.Resource;
import calico.confd.model.BgpStore;
import calico.confd.model.BgpView;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import java.util.ArrayList;
import java.util.List;

/** Builds a {@link BgpView} the way the syncer would: through {@link BgpStore}. */
public final class ViewBuilder {

    private final List<Update> updates = new ArrayList<>();

    public ViewBuilder add(Resource... resources) {
        for (Resource r : resources) {
            updates.add(Update.of(UpdateType.NEW, r, 1));
        }
        return this;
    }

    public BgpView build() {
        BgpStore store = new BgpStore();
        store.apply(updates);
        return store.view();
    }
}
