package calico.controllers.app;

import io.fabric8.kubernetes.client.informers.ResourceEventHandler;

/** An informer handler that only asks for a reconcile: reconcilers read the current state themselves. */
final class TriggerOnChange<T> implements ResourceEventHandler<T> {

    private final Runnable trigger;

    TriggerOnChange(Runnable trigger) {
        this.trigger = trigger;
    }

    @Override
    public void onAdd(T obj) {
        trigger.run();
    }

    @Override
    public void onUpdate(T oldObj, T newObj) {
        trigger.run();
    }

    @Override
    public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        trigger.run();
    }
}
