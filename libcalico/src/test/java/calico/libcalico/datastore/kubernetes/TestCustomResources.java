package calico.libcalico.datastore.kubernetes;

import calico.api.model.ResourceKind;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * Where the kubernetes datastore keeps each Calico kind, for tests that write or delete custom
 * resources around the datastore (shipped in the test-jar).
 */
public final class TestCustomResources {

    private TestCustomResources() {
    }

    /** {@return the group, version, kind, plural and scope of {@code kind}'s custom resources} */
    public static ResourceDefinitionContext context(ResourceKind kind) {
        return CrdCodec.context(kind);
    }
}
