package calico.libcalico.testing;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.Watch;
import calico.libcalico.datastore.WatchListener;
import java.util.Optional;

/**
 * A datastore that hands every call to another one; tests override the calls they want to
 * slow down or hold back. {@link #close()} leaves the delegate open: its owner closes it.
 */
public class ForwardingDatastore implements Datastore {

    private final Datastore delegate;

    public ForwardingDatastore(Datastore delegate) {
        this.delegate = delegate;
    }

    @Override
    public Optional<Resource> get(ResourceKey key) {
        return delegate.get(key);
    }

    @Override
    public ListResult list(ResourceKind kind, String namespace, String labelSelector) {
        return delegate.list(kind, namespace, labelSelector);
    }

    @Override
    public ListResult listAt(ResourceKind kind, String namespace, String labelSelector, long revision) {
        return delegate.listAt(kind, namespace, labelSelector, revision);
    }

    @Override
    public Resource create(Resource resource) {
        return delegate.create(resource);
    }

    @Override
    public Resource update(Resource resource) {
        return delegate.update(resource);
    }

    @Override
    public Resource delete(ResourceKey key, String resourceVersion) {
        return delegate.delete(key, resourceVersion);
    }

    @Override
    public Watch watch(ResourceKind kind, String namespace, long fromRevision, WatchListener listener) {
        return delegate.watch(kind, namespace, fromRevision, listener);
    }

    @Override
    public long currentRevision() {
        return delegate.currentRevision();
    }

    @Override
    public boolean presents(ResourceKind kind) {
        return delegate.presents(kind);
    }

    @Override
    public void close() {
    }
}
