package calico.libcalico.datastore;

import calico.api.model.Resource;
import java.util.List;

/** Resources read in one consistent list, and the revision of the datastore at that read. */
public record ListResult(List<Resource> items, long revision) {
    public ListResult {
        items = List.copyOf(items);
    }
}
