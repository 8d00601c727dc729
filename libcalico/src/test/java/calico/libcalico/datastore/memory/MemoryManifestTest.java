package calico.libcalico.datastore.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ClusterInformation;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A memory datastore that opens holding a manifest's resources ({@code CALICO_MEMORY_MANIFEST}). */
class MemoryManifestTest {

    private static final String READY = """
            apiVersion: projectcalico.org/v3
            kind: ClusterInformation
            metadata: {name: default}
            spec: {datastoreReady: true}
            ---
            apiVersion: projectcalico.org/v3
            kind: GlobalNetworkPolicyList
            items:
            - apiVersion: projectcalico.org/v3
              kind: GlobalNetworkPolicy
              metadata: {name: default.a}
              spec: {selector: all(), ingress: [{action: Allow}]}
            - apiVersion: projectcalico.org/v3
              kind: GlobalNetworkPolicy
              metadata: {name: default.b}
              spec: {selector: app == 'web', egress: [{action: Deny}]}
            """;

    @TempDir
    Path dir;

    private Path manifest(String text) throws IOException {
        return Files.writeString(dir.resolve("manifest.yaml"), text);
    }

    private static DatastoreConfig memory(Path manifest) {
        return DatastoreProperties.fromVariables(Map.of("DATASTORE_TYPE", "memory"), DatastoreProperties.Source.of(
                "felix", "FELIX_")).toConfig(Map.of(MemoryManifest.VARIABLE, manifest.toString()));
    }

    @Test
    void everyStoreOpenedFromTheConfigurationStartsWithTheManifestsResources() throws IOException {
        DatastoreConfig config = memory(manifest(READY));
        try (Datastore first = config.open(); Datastore second = config.open()) {
            for (Datastore store : new Datastore[] {first, second}) {
                assertThat(store.get(new ResourceKey(ResourceKind.CLUSTER_INFORMATION, null, "default")))
                        .hasValueSatisfying(r -> assertThat(((ClusterInformation) r).spec().datastoreReady()).isTrue());
                assertThat(store.list(ResourceKind.GLOBAL_NETWORK_POLICY).items()).extracting(r -> r.metadata().name())
                        .containsExactly("default.a", "default.b");
            }
            // Each its own store: a write to one is not in the other.
            first.delete(new ResourceKey(ResourceKind.GLOBAL_NETWORK_POLICY, null, "default.a"), null);
            assertThat(second.list(ResourceKind.GLOBAL_NETWORK_POLICY).items()).hasSize(2);
        }
    }

    @Test
    void withoutTheVariableTheStoreOpensEmpty() {
        DatastoreConfig config = DatastoreConfig.fromEnvironment(Map.of("DATASTORE_TYPE", "memory"));
        assertThat(config.memory()).isEqualTo(MemoryManifest.NONE);
        try (Datastore store = config.open()) {
            assertThat(store.list(ResourceKind.CLUSTER_INFORMATION).items()).isEmpty();
        }
    }

    @Test
    void aBadManifestIsRefusedWhenTheConfigurationIsReadNamingTheVariableTheFileAndTheReason() throws IOException {
        Path missing = dir.resolve("absent.yaml");
        assertThatThrownBy(() -> memory(missing)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("CALICO_MEMORY_MANIFEST: " + missing + ": cannot be read");

        Path notYaml = manifest("kind: [unclosed");
        assertThatThrownBy(() -> memory(notYaml)).hasMessageStartingWith("CALICO_MEMORY_MANIFEST: " + notYaml + ": ");

        Path badField = manifest("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: default.bad}
                spec: {selector: "app == ", ingress: [{action: Allow}]}
                """);
        assertThatThrownBy(() -> memory(badField)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("CALICO_MEMORY_MANIFEST: " + badField + ": GlobalNetworkPolicy")
                .hasMessageContaining("default.bad").hasMessageContaining("selector");

        Path twice = manifest(READY + "---\n" + READY.substring(0, READY.indexOf("---")));
        assertThatThrownBy(() -> memory(twice)).hasMessageContaining("ClusterInformation").hasMessageEndingWith(
                "given twice");
    }
}
