package calico.controllers.config;

import calico.api.model.KubeControllersConfiguration;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps KubeControllersConfiguration {@code default} and the running configuration in step, as
 * Calico's run-config controller does: {@link #reconcile()} creates the resource with Calico's
 * defaults when absent (also after someone deleted it), merges it with the environment, writes
 * {@code status} only when it differs (so its own write settles after one more event), and hands a
 * changed {@link RunConfig} to {@code onChange}. Run it from a {@code ReconcileLoop} triggered by a
 * watch of the kind.
 */
public final class ConfigController {

    private static final Logger LOG = LoggerFactory.getLogger(ConfigController.class);
    static final ResourceKey KEY = new ResourceKey(ResourceKind.KUBE_CONTROLLERS_CONFIGURATION, null, RunConfigMerge.NAME);

    private final Datastore datastore;
    private final EnvOverrides env;
    private final boolean kubernetes;
    private final Consumer<RunConfig> onChange;
    /** The configuration last handed out; only to tell a change from a repeat. */
    private RunConfig published;

    public ConfigController(Datastore datastore, EnvOverrides env, boolean kubernetes, Consumer<RunConfig> onChange) {
        this.datastore = Objects.requireNonNull(datastore, "datastore");
        this.env = Objects.requireNonNull(env, "env");
        this.kubernetes = kubernetes;
        this.onChange = Objects.requireNonNull(onChange, "onChange");
    }

    /** The outcome of one reconcile: the running configuration, and whether the status was written. */
    public record Result(RunConfig config, boolean created, boolean statusWritten) {
    }

    /** One pass; datastore failures propagate (the loop retries). */
    public synchronized Result reconcile() {
        boolean created = false;
        KubeControllersConfiguration current;
        Optional<KubeControllersConfiguration> stored = datastore.get(KEY).map(KubeControllersConfiguration.class::cast);
        if (stored.isPresent()) {
            current = stored.get();
        } else {
            try {
                current = (KubeControllersConfiguration) datastore.create(RunConfigMerge.defaults());
                created = true;
                LOG.info("created KubeControllersConfiguration default with Calico's defaults");
            } catch (DatastoreException.AlreadyExists raced) {
                current = datastore.get(KEY).map(KubeControllersConfiguration.class::cast).orElseThrow(() -> raced);
            }
        }
        RunConfigMerge.Merged merged = RunConfigMerge.merge(env, current.spec(), kubernetes);
        boolean write = !merged.status().equals(current.status());
        if (write) {
            // Carries the resourceVersion read: a concurrent edit of the spec wins, and the next event merges it.
            datastore.update(current.withStatus(merged.status()));
        }
        if (!merged.config().equals(published)) {
            published = merged.config();
            LOG.info("running configuration: {}", merged.config());
            onChange.accept(merged.config());
        }
        return new Result(merged.config(), created, write);
    }
}
