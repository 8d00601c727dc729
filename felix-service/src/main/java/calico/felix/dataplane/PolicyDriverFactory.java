package calico.felix.dataplane;

import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;

/**
 * Makes the policy driver for a {@link BackendChoice}. Called on the dataplane thread, which is
 * already in the programmed network namespace (so a driver that opens kernel sockets opens them
 * there). Creating a driver must not touch the kernel's rules: the first {@code apply} does.
 */
@FunctionalInterface
public interface PolicyDriverFactory {

    /**
     * {@return a new driver rendering {@code model}} (the kernel dataplane's one model, which the
     * dataplane folds each batch into before the driver's apply); throws when this build or host
     * cannot provide one for {@code choice}.
     */
    PolicyDriver create(BackendChoice choice, DataplaneModel model);
}
