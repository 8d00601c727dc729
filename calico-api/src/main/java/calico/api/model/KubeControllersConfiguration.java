package calico.api.model;

/** The {@code projectcalico.org/v3} KubeControllersConfiguration resource. */
public record KubeControllersConfiguration(ObjectMeta metadata, KubeControllersConfigurationSpec spec) implements Resource {

    @Override
    public KubeControllersConfiguration withMetadata(ObjectMeta newMetadata) {
        return new KubeControllersConfiguration(newMetadata, spec);
    }
}
