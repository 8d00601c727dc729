package calico.confd.render;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import calico.confd.ViewBuilder;
import calico.confd.bird.BirdValidator;
import calico.confd.model.BgpView;
import calico.confd.model.ServiceInfo;
import calico.confd.services.KubernetesServices;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One case per feature: {@code golden/<case>/input.yaml} (the datastore, as calicoctl would
 * apply it, plus {@code secrets.properties} as {@code <secret>/<key>=value}) rendered for one
 * node must equal {@code golden/<case>/<node>.cfg}, its skipped list {@code <node>.skipped},
 * and BIRD ({@code bird -p -c}) must accept the config. {@code -Dconfd.golden.update=true}
 * rewrites the expected files (review the diff).
 */
class GoldenConfigTest {

    static final Path GOLDEN = Path.of("src/test/resources/golden");

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0} for {1}")
    @CsvSource({
            "mesh, node-1",
            "mesh, node-2",
            "dual-stack, node-1",
            "route-reflector, rr-1",
            "route-reflector, node-2",
            "explicit-peers, node-1",
            "explicit-peers, node-2",
            "filters, node-1",
            "services-communities, node-1",
            "pools-blocks, node-1",
            "node-override, node-1",
            "bad-input, node-1",
            "local-workloads, node-1",
            "local-workloads, node-2",
            "reachable-ignored, node-1",
            "service-advertisement, node-1",
            "service-advertisement, node-2",
    })
    void rendersAsExpectedAndBirdAcceptsIt(String caseName, String node) throws Exception {
        Path dir = GOLDEN.resolve(caseName);
        ViewBuilder vb = new ViewBuilder().add(ResourceCodec.get()
                .parseAll(Files.readString(dir.resolve("input.yaml"))).toArray(new Resource[0]));
        if (Files.exists(dir.resolve("services.yaml"))) {
            vb.services(kubernetesServices(Files.readString(dir.resolve("services.yaml")), node));
        }
        BgpView view = vb.build();
        Properties secrets = new Properties();
        if (Files.exists(dir.resolve("secrets.properties"))) {
            try (InputStream in = Files.newInputStream(dir.resolve("secrets.properties"))) {
                secrets.load(in);
            }
        }
        Rendered r = new BirdConfigBuilder((n, k) -> Optional.ofNullable(secrets.getProperty(n + "/" + k)))
                .render(view, node, "");
        String skipped = r.skipped().stream().map(s -> s.source() + ": " + s.reason() + "\n")
                .collect(Collectors.joining());
        check(dir.resolve(node + ".cfg"), r.config());
        check(dir.resolve(node + ".skipped"), skipped);

        Path file = tmp.resolve("bird.cfg");
        Files.writeString(file, r.config());
        assertThat(new BirdValidator("/usr/sbin/bird").check(file)).as("bird -p -c on " + caseName + "/" + node)
                .isNull();
    }

    /** {@code services.yaml}: Kubernetes Services and EndpointSlices, as the Services watch sees them from {@code node}. */
    static Map<String, ServiceInfo> kubernetesServices(String yaml, String node) {
        KubernetesSerialization serialization = new KubernetesSerialization();
        List<Service> services = new ArrayList<>();
        List<EndpointSlice> slices = new ArrayList<>();
        for (String doc : yaml.split("(?m)^---\\s*$")) {
            if (doc.lines().allMatch(l -> l.isBlank() || l.startsWith("#"))) {
                continue;
            }
            Object o = serialization.unmarshal(doc);
            if (o instanceof Service s) {
                services.add(s);
            } else if (o instanceof EndpointSlice e) {
                slices.add(e);
            } else {
                throw new IllegalArgumentException("services.yaml: only Service and EndpointSlice, got " + o);
            }
        }
        return KubernetesServices.infos(services, slices, node);
    }

    private static void check(Path expected, String actual) throws IOException {
        if (Boolean.getBoolean("confd.golden.update")) {
            Files.writeString(expected, actual, StandardCharsets.UTF_8);
        }
        assertThat(Files.exists(expected)).as(expected + " exists (run with -Dconfd.golden.update=true)").isTrue();
        assertThat(actual).as(expected.toString()).isEqualTo(Files.readString(expected));
    }
}
