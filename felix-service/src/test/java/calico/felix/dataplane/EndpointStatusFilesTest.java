package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** endpointStatusPathPrefix: Calico's per-endpoint status files follow the programmed model. */
class EndpointStatusFilesTest {

    @TempDir
    Path prefix;

    private static DataplaneUpdate wep(String pod, DataplaneUpdate.WorkloadKey key) {
        return new DataplaneUpdate.WorkloadEndpointUpdate("ns1/" + pod, "cali" + pod, null, List.of("10.65.0.1/32"),
                List.of(), List.of(), List.of(), List.of(), DataplaneUpdate.EndpointIdentity.NONE, List.of(),
                List.of(), key);
    }

    @Test
    void oneEmptyFilePerProgrammedEndpointNamedAsCalicosCniPluginLooksForIt() throws Exception {
        DataplaneModel model = new DataplaneModel();
        EndpointStatusFiles files = new EndpointStatusFiles(() -> model);
        Path dir = prefix.resolve("endpoint-status");
        Files.createDirectories(dir);
        Files.createFile(dir.resolve("k8s ns1%2Fgone eth0")); // left by an earlier felix for an endpoint now gone
        model.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("endpointStatusPathPrefix",
                prefix.toString()))));
        model.apply(wep("web", new DataplaneUpdate.WorkloadKey("k8s", "ns1/web", "eth0")));
        assertThat(files.sync()).as("nothing before the model is in sync").isEmpty();
        assertThat(dir.resolve("k8s ns1%2Fgone eth0")).exists();

        model.apply(new DataplaneUpdate.InSync());
        assertThat(files.sync()).containsExactly("k8s ns1%2Fweb eth0");
        assertThat(dir.resolve("k8s ns1%2Fweb eth0")).isEmptyFile();
        assertThat(dir.resolve("k8s ns1%2Fgone eth0")).as("stale files go").doesNotExist();

        model.apply(wep("db", new DataplaneUpdate.WorkloadKey("k8s", "ns1/db pod", "eth0")));
        files.applied(java.time.Duration.ZERO, null, null);
        assertThat(dir.resolve("k8s ns1%2Fdb%20pod eth0")).as("a failed apply writes nothing").doesNotExist();
        assertThat(files.sync()).containsExactlyInAnyOrder("k8s ns1%2Fweb eth0", "k8s ns1%2Fdb%20pod eth0");

        model.apply(new DataplaneUpdate.WorkloadEndpointRemove("ns1/web"));
        assertThat(files.sync()).containsExactly("k8s ns1%2Fdb%20pod eth0");
        assertThat(dir.resolve("k8s ns1%2Fweb eth0")).doesNotExist();

        model.apply(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(Map.of("endpointStatusPathPrefix", "none"))));
        model.apply(wep("web", new DataplaneUpdate.WorkloadKey("k8s", "ns1/web", "eth0")));
        assertThat(files.sync()).as("none turns the files off").isEmpty();
        assertThat(dir.resolve("k8s ns1%2Fweb eth0")).doesNotExist();
    }
}
