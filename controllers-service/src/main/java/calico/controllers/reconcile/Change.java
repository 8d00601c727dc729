package calico.controllers.reconcile;

import calico.api.model.ResourceKey;

/** One write a reconciler made, so that a run's result says exactly what changed (empty: nothing). */
public sealed interface Change permits Change.Created, Change.Updated, Change.Deleted {

    ResourceKey key();

    record Created(ResourceKey key) implements Change {
    }

    record Updated(ResourceKey key) implements Change {
    }

    record Deleted(ResourceKey key) implements Change {
    }
}
