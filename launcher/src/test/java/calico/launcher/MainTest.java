package calico.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {

    private static String usageError(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(List.of(args), Map.of(), new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        return err.toString(StandardCharsets.UTF_8).lines().findFirst().orElse("");
    }

    @Test
    void badArgumentsAreRefusedNamingTheOption() {
        assertThat(usageError("start", "--run-dir", "/tmp/x")).isEqualTo("launcher: unknown command start");
        assertThat(usageError("up")).isEqualTo("launcher: --run-dir is required");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--encapsulation", "gre"))
                .isEqualTo("launcher: --encapsulation: 'gre' is not none, vxlan or ipip");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--nodes", "two")).isEqualTo("launcher: --nodes: 'two' is not a number");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--nodes", "0")).isEqualTo("launcher: --nodes: must be between 1 and 200, got 0");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--dataplane", "bpf"))
                .isEqualTo("launcher: --dataplane: 'bpf' is not nftables or iptables");
        assertThat(usageError("up", "--run-dir")).isEqualTo("launcher: --run-dir needs a value");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--bogus")).isEqualTo("launcher: unknown option --bogus");
    }

    @Test
    void eachNodeHasItsOwnPortsAndNodeOneKeepsTheUsualOnes() {
        Settings s = Main.parse(new ArrayDeque<>(List.of("--run-dir", "/tmp/x", "--nodes", "3")));
        NodeServices n1 = new NodeServices(s, s.topology().nodes().get(0));
        NodeServices n3 = new NodeServices(s, s.topology().nodes().get(2));

        assertThat(n1.ports()).isEqualTo(new Ports(9099, 9097, 9091, 9086, 9085, 9088, 100));
        assertThat(n3.ports()).isEqualTo(new Ports(9299, 9297, 9291, 9286, 9285, 9288, 100));
        assertThat(n3.node().namespace()).isEqualTo("calico-node-3");
        assertThat(n3.node().cidr()).isEqualTo("172.31.255.3/24");
        assertThat(n1.services()).extracting(NodeServices.Service::name)
                .containsExactly("felix-node-1", "cni-node-1", "confd-node-1", "bird-node-1");
        // Endpoint status files under each node's own directory, never the shared /var/run/calico.
        assertThat(n3.services().get(0).process().environment())
                .containsEntry("FELIX_ENDPOINTSTATUSPATHPREFIX", "/tmp/x/nodes/node-3");
    }

    @Test
    void vxlanRunsNoConfdNorBirdAndStartUpGetsThePoolMode() {
        Settings s = Main.parse(new ArrayDeque<>(List.of("--run-dir", "/tmp/x", "--encapsulation", "vxlan", "--wireguard")));
        NodeServices n2 = new NodeServices(s, s.topology().nodes().get(1));

        assertThat(n2.services()).extracting(NodeServices.Service::name).containsExactly("felix-node-2", "cni-node-2");
        assertThat(n2.startupEnvironment()).containsEntry("NODENAME", "node-2").containsEntry("CALICO_NODE_NETNS", "calico-node-2")
                .containsEntry("IP_AUTODETECTION_METHOD", "interface=eth0").containsEntry("CALICO_IPV4POOL_VXLAN", "Always")
                .containsEntry("CALICO_IPV4POOL_IPIP", "Never").containsEntry("CALICO_NETWORKING_BACKEND", "vxlan")
                .containsEntry("CALICO_NODENAME_FILE", "/tmp/x/nodes/node-2/nodename");
    }

    @Test
    void eachNodesCniConfigNamesTheNodeAndTheDatastore(@TempDir Path run) throws Exception {
        Settings s = Main.parse(new ArrayDeque<>(List.of("--run-dir", run.toString(), "--kubeconfig", "/k/admin.kubeconfig")));
        NodeServices n2 = new NodeServices(s, s.topology().nodes().get(1));

        n2.writeCniConf(Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", "http://127.0.0.1:12379"));
        String etcd = Files.readString(n2.cniConf());
        n2.writeCniConf(Map.of("DATASTORE_TYPE", "kubernetes", "KUBECONFIG", "/k/admin.kubeconfig"));
        String kdd = Files.readString(n2.cniConf());

        assertThat(n2.cniConf()).isEqualTo(run.resolve("nodes/node-2/10-calico.conf"));
        assertThat(etcd).contains("\"datastore_type\": \"etcdv3\", \"etcd_endpoints\": \"http://127.0.0.1:12379\"")
                .contains("\"nodename\": \"node-2\"").contains("\"ipv4_pools\": [\"192.168.0.0/16\"]")
                .contains("\"kubeconfig\": \"/k/admin.kubeconfig\"");
        assertThat(kdd).contains("\"datastore_type\": \"kubernetes\",").doesNotContain("etcd_endpoints");
    }

    @Test
    void eachNodeJvmGetsItsOptionsFromTheFlagsFile(@TempDir Path dir) throws Exception {
        Path flags = dir.resolve("flags.conf");
        Files.writeString(flags, """
                # comment line
                felix  -XX:+UseSerialGC -Xmx200m   # trailing comment
                cni    -Xmx64m
                env    MALLOC_ARENA_MAX=2
                """);
        Settings s = Main.parse(new ArrayDeque<>(List.of("--run-dir", dir.toString(), "--root", "/repo", "--jvm-flags", flags.toString())));
        NodeServices n1 = new NodeServices(s, s.topology().nodes().get(0));

        assertThat(n1.services()).extracting(service -> service.process().command()).containsExactly(
                List.of("java", "-XX:+UseSerialGC", "-Xmx200m", "-jar", "/repo/felix-service/target/felix-service-exec.jar"),
                List.of("java", "-Xmx64m", "-jar", "/repo/cni-plugin/target/cni-plugin.jar", "daemon", dir.resolve("nodes/node-1/cni.sock").toString()),
                List.of("java", "-jar", "/repo/confd-service/target/confd-service-exec.jar"),
                List.of("bird", "-R", "-f", "-c", dir.resolve("nodes/node-1/bird.cfg").toString(), "-s",
                        dir.resolve("nodes/node-1/bird.ctl").toString(), "-P", dir.resolve("nodes/node-1/bird.pid").toString()));
        assertThat(n1.services()).filteredOn(service -> service.process().command().get(0).equals("java"))
                .hasSize(3).allSatisfy(service -> assertThat(service.process().environment()).containsEntry("MALLOC_ARENA_MAX", "2"));
        assertThat(n1.services().get(3).process().environment()).doesNotContainKey("MALLOC_ARENA_MAX");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--jvm-flags", dir.resolve("missing").toString()))
                .isEqualTo("launcher: --jvm-flags: no file " + dir.resolve("missing"));
        Files.writeString(flags, "env MALLOC_ARENA_MAX\n");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--jvm-flags", flags.toString()))
                .isEqualTo("launcher: JVM flags file: env: 'MALLOC_ARENA_MAX' is not NAME=value");
        Files.writeString(flags, "felix -Xmx1m\nfelix -Xmx2m\n");
        assertThat(usageError("up", "--run-dir", "/tmp/x", "--jvm-flags", flags.toString()))
                .isEqualTo("launcher: " + flags + ": service felix is named twice");
    }

    @Test
    void theRepositorysFlagsFileIsTheDefaultAndNamesEveryNodeJvm() {
        // The module's tests run in launcher/: the repository is its parent.
        Settings s = Main.parse(new ArrayDeque<>(List.of("--run-dir", "/tmp/x", "--root", "..")));

        for (String service : List.of("felix", "cni", "confd", "node-startup")) {
            assertThat(s.jvmFlags().of(service)).as(service).contains("-XX:+UseSerialGC").anyMatch(f -> f.startsWith("-Xmx"));
        }
        // Every node JVM runs with a class archive (AppCdsTest), the plain mains (felix, the CNI daemon, confd) too.
        assertThat(s.jvmFlags().of(JvmFlags.APPCDS)).contains("felix", "node-startup", "cni", "confd");
        // The daemon's command (the same options, its archive not built here).
        Settings noCache = new Settings(s.runDir(), s.root(), s.prefix(), s.nodes(), s.underlay(), s.encapsulation(), s.wireguard(),
                s.dataplane(), s.kubeconfig(), s.typha(), s.goldmane(), s.ports(), s.poolCidr(),
                new JvmFlags(s.jvmFlags().byService(), java.util.Optional.empty()));
        assertThat(new NodeServices(noCache, noCache.topology().nodes().get(0)).services().get(1).process().command())
                .startsWith("java", "-XX:+UseSerialGC").containsSubsequence("-jar",
                        s.root().resolve("cni-plugin/target/cni-plugin.jar").toString(), "daemon");
    }
}
