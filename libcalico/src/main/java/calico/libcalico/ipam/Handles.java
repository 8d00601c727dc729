package calico.libcalico.ipam;

import calico.api.model.IPAMHandle;
import calico.api.model.IPAMHandleSpec;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** Handle counts, each change a compare-and-swap retried on conflict. */
final class Handles {

    private final Datastore ds;
    private final int maxRetries;

    Handles(Datastore ds, int maxRetries) {
        this.ds = ds;
        this.maxRetries = maxRetries;
    }

    static ResourceKey key(String handleId) {
        return ResourceKey.of(ResourceKind.IPAM_HANDLE, IpamNames.handleName(handleId));
    }

    Optional<IPAMHandle> get(String handleId) {
        return ds.get(key(handleId)).map(IPAMHandle.class::cast)
                .filter(h -> !Boolean.TRUE.equals(h.spec().deleted()));
    }

    /** Adds {@code n} to the handle's count for {@code block}, creating the handle if needed. */
    void increment(String handleId, String block, int n) {
        // Most handles are new (one per pod): try the create first, read only when it exists.
        try {
            ds.create(new IPAMHandle(ObjectMeta.named(IpamNames.handleName(handleId)),
                    new IPAMHandleSpec(handleId, Map.of(block, n), null)));
            return;
        } catch (DatastoreException.AlreadyExists exists) {
            // add to it below
        }
        for (int attempt = 0; attempt < maxRetries; attempt++) {
            Optional<IPAMHandle> h = ds.get(key(handleId)).map(IPAMHandle.class::cast);
            try {
                if (h.isEmpty()) {
                    ds.create(new IPAMHandle(ObjectMeta.named(IpamNames.handleName(handleId)),
                            new IPAMHandleSpec(handleId, Map.of(block, n), null)));
                } else {
                    Map<String, Integer> counts = new HashMap<>(h.get().spec().block());
                    counts.merge(block, n, Integer::sum);
                    ds.update(new IPAMHandle(h.get().metadata(), new IPAMHandleSpec(h.get().spec().handleID(), counts, null)));
                }
                return;
            } catch (DatastoreException.AlreadyExists | DatastoreException.Conflict | DatastoreException.NotFound raced) {
                // someone else wrote the handle between our read and write: read again
            }
        }
        throw new IpamException.TooMuchContention("handle " + handleId + ": still conflicting after " + maxRetries
                + " attempts to record " + n + " address(es) in block " + block);
    }

    /** Subtracts {@code n} from the handle's count for {@code block}; drops the entry at 0 and the handle when empty. */
    void decrement(String handleId, String block, int n) {
        for (int attempt = 0; attempt < maxRetries; attempt++) {
            Optional<IPAMHandle> h = ds.get(key(handleId)).map(IPAMHandle.class::cast);
            if (h.isEmpty()) {
                return;
            }
            Map<String, Integer> counts = new HashMap<>(h.get().spec().block());
            int left = counts.getOrDefault(block, 0) - n;
            if (left > 0) {
                counts.put(block, left);
            } else {
                counts.remove(block);
            }
            try {
                if (counts.isEmpty()) {
                    ds.delete(h.get().key(), h.get().metadata().resourceVersion());
                } else {
                    ds.update(new IPAMHandle(h.get().metadata(), new IPAMHandleSpec(h.get().spec().handleID(), counts, null)));
                }
                return;
            } catch (DatastoreException.Conflict | DatastoreException.NotFound raced) {
                // read again
            }
        }
        throw new IpamException.TooMuchContention("handle " + handleId + ": still conflicting after " + maxRetries
                + " attempts to release " + n + " address(es) of block " + block);
    }
}
