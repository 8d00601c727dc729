package calico.api.model;

/**
 * The {@code projectcalico.org/v3} KubeControllersConfiguration resource. {@code status}
 * shows the configuration the controllers actually run with (resource merged with their
 * environment).
 */
public record KubeControllersConfiguration(ObjectMeta metadata, KubeControllersConfigurationSpec spec,
                                           KubeControllersConfigurationStatus status) implements Resource {

    /** A configuration without status, as users create it. */
    public KubeControllersConfiguration(ObjectMeta metadata, KubeControllersConfigurationSpec spec) {
        this(metadata, spec, null);
    }

    @Override
    public KubeControllersConfiguration withMetadata(ObjectMeta newMetadata) {
        return new KubeControllersConfiguration(newMetadata, spec, status);
    }

    public KubeControllersConfiguration withStatus(KubeControllersConfigurationStatus newStatus) {
        return new KubeControllersConfiguration(metadata, spec, newStatus);
    }
}
