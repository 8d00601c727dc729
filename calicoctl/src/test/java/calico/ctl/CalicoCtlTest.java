package calico.ctl;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.codec.ResourceCodec;
import calico.api.model.GlobalNetworkPolicy;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.testing.EtcdServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** calicoctl end to end against a real etcd, through the same entry point {@code main} uses. */
class CalicoCtlTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private static final Path DEMO = Path.of("src", "test", "resources", "resources.yaml");

    @TempDir
    Path tmp;

    private Map<String, String> env;
    private String stdout;
    private String stderr;

    @BeforeEach
    void wipe() {
        env = Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", ETCD.endpoint().toString());
        // Each test starts from an empty datastore: delete what a previous test applied.
        assertThat(run("delete", "-f", DEMO.toString(), "--skip-not-exists")).as(stderr).isZero();
    }

    private int run(String... args) {
        return runWithInput("", args);
    }

    private int runWithInput(String stdin, String... args) {
        CtlRun r = CtlRun.of(env, stdin, args);
        stdout = r.stdout();
        stderr = r.stderr();
        return r.status();
    }

    @Test
    void appliesTheDemoResourcesAndReadsThemBack() {
        assertThat(run("apply", "-f", DEMO.toString())).as(stderr).isZero();
        assertThat(stdout).contains("Successfully applied 9 resource(s)");

        assertThat(run("get", "tiers")).isZero();
        // Calico's tabwriter: every cell padded (width = the longest + 3), then a blank line.
        assertThat(stdout).isEqualTo("NAME       ORDER     \nsecurity   100       \ndefault    1000000   \n\n");

        assertThat(run("get", "networkpolicies", "-A")).isZero();
        assertThat(stdout).contains("demo").contains("allow-frontend-to-backend");

        assertThat(run("get", "GlobalNetworkPolicy", "security.deny-blocked", "-o", "yaml")).isZero();
        var gnp = (GlobalNetworkPolicy) ResourceCodec.get().parse(stdout);
        assertThat(gnp.spec().tier()).isEqualTo("security");
        assertThat(gnp.metadata().resourceVersion()).isNotBlank();

        assertThat(run("get", "globalnetworksets", "-l", "role == 'blocked'", "-o", "json")).isZero();
        assertThat(ResourceCodec.get().parseAll(stdout)).extracting(r -> r.metadata().name())
                .containsExactly("blocked-ranges");

        // Applying again overwrites instead of failing.
        assertThat(run("apply", "-f", DEMO.toString())).as(stderr).isZero();
        assertThat(run("create", "-f", DEMO.toString())).isEqualTo(1);
        assertThat(stderr).contains("already exists");
    }

    @Test
    void aFileWithOneInvalidResourceWritesNothingAndNamesTheField() throws Exception {
        Path file = tmp.resolve("mixed.yaml");
        Files.writeString(file, """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: good}
                spec: {order: 5}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata: {name: bad}
                spec:
                  nets: [10.0.0.0/8, 300.1.1.1/32]
                """);

        assertThat(run("apply", "-f", file.toString())).isEqualTo(1);
        assertThat(stderr).contains("spec.nets[1]");

        assertThat(run("get", "tier", "good")).isEqualTo(1);
        assertThat(stderr).contains("not found");
    }

    @Test
    void malformedInputIsRefusedWithTheFieldNamed() {
        String typo = """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: typo}
                spec: {ordr: 5}
                """;
        assertThat(runWithInput(typo, "create", "-f", "-")).isEqualTo(1);
        assertThat(stderr).contains("spec.ordr: unknown field");

        assertThat(run("get", "bogus")).isEqualTo(2);
        assertThat(stderr).contains("unknown resource kind \"bogus\"");
        assertThat(run("apply")).isEqualTo(2);
        assertThat(stderr).contains("apply needs -f FILE");
        assertThat(run("apply", "-f", tmp.resolve("missing.yaml").toString())).isEqualTo(1);
        assertThat(stderr).contains("no such file");
    }

    @Test
    void deletesByNameAndReportsMissingResources() {
        assertThat(run("apply", "-f", DEMO.toString())).isZero();

        assertThat(run("delete", "networkpolicy", "allow-frontend-to-backend", "-n", "demo")).as(stderr).isZero();
        assertThat(stdout).contains("Successfully deleted 1 resource(s)");
        assertThat(run("delete", "networkpolicy", "allow-frontend-to-backend", "-n", "demo")).isEqualTo(1);
        assertThat(stderr).contains("not found");
    }

    @Test
    void aBadDatastoreSettingNamesTheVariable() {
        env = Map.of("DATASTORE_TYPE", "zookeeper");
        assertThat(run("get", "tiers")).isEqualTo(1);
        assertThat(stderr).contains("DATASTORE_TYPE");
    }

    @Test
    void ipamShowReleaseAndCheck() {
        try (var store = DatastoreConfig.fromEnvironment(env).open()) {
            for (var k : List.of(calico.api.model.ResourceKind.IPAM_HANDLE, calico.api.model.ResourceKind.IPAM_BLOCK,
                    calico.api.model.ResourceKind.BLOCK_AFFINITY, calico.api.model.ResourceKind.IP_POOL)) {
                store.list(k).items().forEach(r -> store.delete(r.key(), null));
            }
            store.create(ResourceCodec.get().parse("""
                    apiVersion: projectcalico.org/v3
                    kind: IPPool
                    metadata: {name: pool}
                    spec: {cidr: 10.9.0.0/24, blockSize: 26}
                    """));
            var ipam = new calico.libcalico.ipam.IpamClient(store, calico.libcalico.ipam.IpamOptions.defaults());
            ipam.assignIp(new calico.libcalico.ipam.AssignIpRequest("h1", calico.api.net.IpAddress.parse("10.9.0.1"), "n1",
                    Map.of()));
            ipam.assignIp(new calico.libcalico.ipam.AssignIpRequest("h2", calico.api.net.IpAddress.parse("10.9.0.2"), "n1",
                    Map.of()));
        }

        assertThat(run("ipam", "show", "--show-blocks")).as(stderr).isZero();
        assertThat(stdout.lines()).containsExactly(
                "+----------+-------------+-----------+------------+-----------+",
                "| GROUPING |    CIDR     | IPS TOTAL | IPS IN USE | IPS FREE  |",
                "+----------+-------------+-----------+------------+-----------+",
                "| IP Pool  | 10.9.0.0/24 |       256 | 2 (1%)     | 254 (99%) |",
                "| Block    | 10.9.0.0/26 |        64 | 2 (3%)     | 62 (97%)  |",
                "+----------+-------------+-----------+------------+-----------+");

        assertThat(run("ipam", "release", "--ip=10.9.0.1")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("Successfully released IP address 10.9.0.1\n");
        assertThat(run("ipam", "release", "--ip", "10.9.0.1")).isEqualTo(1);
        assertThat(stderr).contains("IP address 10.9.0.1 is not assigned");
        assertThat(run("ipam", "release", "--ip=10.9.0.300")).isEqualTo(1);
        assertThat(stderr).contains("--ip: ");

        assertThat(run("ipam", "check")).as(stderr).isZero();
        assertThat(stdout).contains("Found 1 IPAM blocks.", "Found 1 IPAM handles.", "Found 1 in-use IPs.",
                "Check complete; found 0 problems.");
        assertThat(run("ipam", "show")).isZero();
        assertThat(stdout.lines()).hasSize(5);
        assertThat(run("ipam", "bogus")).isEqualTo(2);
        assertThat(run("ipam", "release")).isEqualTo(2);
        assertThat(stderr).contains("ipam release needs --ip=IP");
    }

    @Test
    void getPrintsCalicosTablesWideAndCustomColumns() {
        assertThat(run("apply", "-f", DEMO.toString())).as(stderr).isZero();

        assertThat(run("get", "ippools")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("""
                NAME                  CIDR             SELECTOR   \n\
                default-ipv4-ippool   192.168.0.0/16   all()      \n\n""");
        assertThat(run("get", "ipp", "-o", "wide")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("""
                NAME                  CIDR             NAT    IPIPMODE   VXLANMODE     DISABLED   DISABLEBGPEXPORT   \
                SELECTOR   \n\
                default-ipv4-ippool   192.168.0.0/16   true   Never      CrossSubnet   false      false              \
                all()      \n\n""");
        assertThat(run("get", "gnp", "-o", "wide")).as(stderr).isZero();
        assertThat(stdout.lines().findFirst().orElseThrow()).startsWith("NAME").contains("TIER", "ORDER", "SELECTOR");
        assertThat(stdout).contains("security.deny-blocked   security   10 ");
        // NAMESPACE only with -n or -A; custom columns by their headings, as typed.
        assertThat(run("get", "networkpolicies", "-A")).as(stderr).isZero();
        assertThat(stdout.lines().findFirst().orElseThrow()).startsWith("NAMESPACE").contains("NAME", "TIER");
        assertThat(run("get", "networkpolicies", "-n", "demo", "-o", "custom-columns=NAME,ORDER")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("NAME                        ORDER   \nallow-frontend-to-backend   100     \n\n");
        assertThat(run("get", "tiers", "-o", "custom-columns=NAME,CIDR")).isEqualTo(1);
        assertThat(stderr).contains("Unknown heading CIDR, valid values are: NAME, ORDER");
        assertThat(run("get", "tiers", "-o", "custom-columns=")).isEqualTo(2);
        assertThat(stderr).contains("need to specify at least one column");
        assertThat(run("get", "tiers", "-o", "xml")).isEqualTo(2);
        assertThat(stderr).contains("unrecognized output format 'xml'");
    }

    @Test
    void ipamConfigureSetsStrictAffinityAndSplitCutsALockedPool() throws Exception {
        try (var store = DatastoreConfig.fromEnvironment(env).open()) {
            for (var k : List.of(calico.api.model.ResourceKind.IP_POOL, calico.api.model.ResourceKind.IPAM_CONFIGURATION)) {
                store.list(k).items().forEach(r -> store.delete(r.key(), null));
            }
            store.create(ResourceCodec.get().parse("""
                    apiVersion: projectcalico.org/v3
                    kind: IPPool
                    metadata: {name: pool, labels: {team: net}}
                    spec: {cidr: 10.0.1.0/24, blockSize: 28, vxlanMode: Always, natOutgoing: true}
                    """));
        }
        assertThat(run("ipam", "configure", "--strictaffinity=true")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("Successfully set StrictAffinity to: true\n");
        assertThat(run("get", "ipamconfigs", "default", "-o", "yaml")).as(stderr).isZero();
        assertThat(stdout).contains("strictAffinity: true");
        assertThat(run("ipam", "configure", "--strictaffinity=maybe")).isEqualTo(2);
        assertThat(stderr).contains("Invalid value. Use true or false to set strictaffinity");

        // Unlocked: refused, nothing changed.
        assertThat(run("ipam", "split", "4", "--cidr=10.0.1.0/24")).isEqualTo(1);
        assertThat(stderr).contains("Datastore is not locked.");
        assertThat(run("datastore", "migrate", "lock")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("Datastore locked.\n");
        assertThat(run("ipam", "split", "3", "--name=pool")).isEqualTo(1);
        assertThat(stderr).contains("not a valid power of 2: 3");
        assertThat(run("ipam", "split", "4", "--cidr=10.0.1.0/24")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("IP Pool pool was successfully split into 4 smaller pools.Created split-pool-0"
                + " with CIDR 10.0.1.0/26.\nCreated split-pool-1 with CIDR 10.0.1.64/26.\nCreated split-pool-2 with CIDR"
                + " 10.0.1.128/26.\nCreated split-pool-3 with CIDR 10.0.1.192/26.\nPlease refer to the documentation for"
                + " final steps.");
        assertThat(run("get", "ippools", "-o", "custom-columns=NAME,CIDR,VXLANMODE,NAT,DISABLED")).as(stderr).isZero();
        assertThat(stdout.lines().skip(1).filter(l -> !l.isEmpty()).map(String::strip).map(l -> l.split(" +")))
                .extracting(f -> String.join(" ", f))
                .containsExactly("split-pool-0 10.0.1.0/26 Always true false", "split-pool-1 10.0.1.64/26 Always true false",
                        "split-pool-2 10.0.1.128/26 Always true false", "split-pool-3 10.0.1.192/26 Always true false");
        assertThat(run("get", "ippool", "split-pool-2", "-o", "yaml")).isZero();
        assertThat(stdout).contains("team: net", "blockSize: 28");
        // -o go-template over the stored pools, as calicoctl runs it (a slice holding the list; Go's field names).
        assertThat(run("get", "ippools", "-o",
                "go-template={{range .}}{{range .Items}}{{.ObjectMeta.Name}}={{.Spec.CIDR}} {{end}}{{end}}")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("split-pool-0=10.0.1.0/26 split-pool-1=10.0.1.64/26 split-pool-2=10.0.1.128/26"
                + " split-pool-3=10.0.1.192/26 ");
        java.nio.file.Path tmpl = java.nio.file.Files.createTempFile("calicoctl", ".tmpl");
        try {
            java.nio.file.Files.writeString(tmpl, "{{range .}}{{.Name}}: {{index .Labels \"team\"}}{{end}}\n");
            assertThat(run("get", "ippool", "split-pool-2", "-o", "go-template-file=" + tmpl)).as(stderr).isZero();
            assertThat(stdout).isEqualTo("split-pool-2: net\n");
        } finally {
            java.nio.file.Files.delete(tmpl);
        }
        assertThat(run("get", "ippools", "-o", "go-template={{range .}}")).isEqualTo(2);
        assertThat(stderr).contains("-o go-template: template: get:1: unexpected EOF: {{range}} has no {{end}}");
        assertThat(run("get", "ippools", "-o", "go-template-file=/nonexistent/t.tmpl")).isEqualTo(2);
        assertThat(stderr).contains("-o go-template-file: cannot read /nonexistent/t.tmpl");
        assertThat(run("datastore", "migrate", "unlock")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("Datastore unlocked.\n");
        assertThat(run("ipam", "split", "2")).isEqualTo(2);
        assertThat(stderr).contains("No name or CIDR provided.");
    }

    @Test
    void ipamCheckReportsLeaksAndReleaseFromAReportFreesOnlyThem() throws Exception {
        try (var store = DatastoreConfig.fromEnvironment(env).open()) {
            for (var k : List.of(calico.api.model.ResourceKind.IPAM_HANDLE, calico.api.model.ResourceKind.IPAM_BLOCK,
                    calico.api.model.ResourceKind.BLOCK_AFFINITY, calico.api.model.ResourceKind.IP_POOL,
                    calico.api.model.ResourceKind.NODE)) {
                store.list(k).items().forEach(r -> store.delete(r.key(), null));
            }
            for (String doc : List.of("""
                    apiVersion: projectcalico.org/v3
                    kind: IPPool
                    metadata: {name: pool}
                    spec: {cidr: 10.9.0.0/24, blockSize: 26}
                    """, """
                    apiVersion: projectcalico.org/v3
                    kind: Node
                    metadata: {name: n1}
                    spec: {}
                    """)) {
                store.create(ResourceCodec.get().parse(doc));
            }
            var ipam = new calico.libcalico.ipam.IpamClient(store, calico.libcalico.ipam.IpamOptions.defaults());
            // A pod that is gone (no workload endpoint), the node's tunnel address, an address given by hand.
            ipam.assignIp(new calico.libcalico.ipam.AssignIpRequest("k8s-pod-network.gone",
                    calico.api.net.IpAddress.parse("10.9.0.1"), "n1", Map.of("namespace", "shop", "pod", "web-0")));
            ipam.assignIp(new calico.libcalico.ipam.AssignIpRequest("vxlan-tunnel-addr-n1",
                    calico.api.net.IpAddress.parse("10.9.0.2"), "n1", Map.of("type", "vxlanTunnelAddress", "node", "n1")));
            ipam.assignIp(new calico.libcalico.ipam.AssignIpRequest("manual",
                    calico.api.net.IpAddress.parse("10.9.0.3"), "n1", Map.of()));
        }
        assertThat(run("datastore", "migrate", "lock")).as(stderr).isZero();
        Path report = tmp.resolve("report.json");
        assertThat(run("ipam", "check", "-o", report.toString())).as(stderr).isZero();
        assertThat(stdout).contains("10.9.0.1 leaked: its owner (pod shop/web-0) no longer exists",
                "Check complete; found 1 problems.");
        var json = ResourceCodec.get().jsonMapper().readTree(Files.readString(report));
        assertThat(json.path("datastoreLocked").asBoolean()).isTrue();
        assertThat(json.path("allocations").path("10.9.0.2").get(0).path("owners").get(0).asText()).isEqualTo("Node(n1)");
        assertThat(json.path("leakedHandles")).hasSize(1);
        assertThat(json.path("leakedHandles").get(0).path("ID").asText()).isEqualTo("k8s-pod-network.gone");

        // Another cluster's report is refused whatever --force says.
        Path other = tmp.resolve("other.json");
        Files.writeString(other, Files.readString(report).replace(json.path("clusterGUID").asText(), "other-guid"));
        assertThat(run("ipam", "release", "--from-report=" + other, "--force")).isEqualTo(1);
        assertThat(stderr).contains("mismatched cluster GUID. Refusing to release.");

        assertThat(run("ipam", "release", "--from-report=" + report)).as(stderr).isZero();
        assertThat(stdout).contains("Deleting 1 handles...", "Released 1 handles; 0 skipped; 0 errors.",
                "You may now unlock the data store.");
        assertThat(run("ipam", "show")).isZero();
        assertThat(stdout).contains("| 2 (1%) ");
        // Unlocking changes the cluster information: the report is stale now.
        assertThat(run("datastore", "migrate", "unlock")).as(stderr).isZero();
        assertThat(run("ipam", "release", "--from-report=" + report)).isEqualTo(1);
        assertThat(stderr).contains("The provided reports are all stale");
    }

    @Test
    void convertTurnsKubernetesPoliciesIntoCalicosUnderTheirOwnNames() throws Exception {
        Path file = tmp.resolve("np.yaml");
        Files.writeString(file, """
                apiVersion: networking.k8s.io/v1
                kind: NetworkPolicy
                metadata: {name: allow-web, namespace: shop}
                spec:
                  podSelector: {matchLabels: {app: web}}
                  ingress:
                  - from: [{podSelector: {matchLabels: {app: lb}}}]
                    ports: [{port: 80}]
                """);
        assertThat(run("convert", "-f", file.toString())).as(stderr).isZero();
        var np = (calico.api.model.NetworkPolicy) ResourceCodec.get().parse(stdout);
        assertThat(np.metadata().name()).isEqualTo("allow-web");
        assertThat(np.metadata().namespace()).isEqualTo("shop");
        assertThat(np.spec().selector()).contains("app == 'web'");
        assertThat(np.spec().ingress()).singleElement().satisfies(r -> {
            assertThat(r.source().selector()).contains("app == 'lb'");
            assertThat(r.destination().ports()).hasSize(1);
        });
        assertThat(stdout).doesNotContain("knp.default", "resourceVersion", "uid");

        Files.writeString(file, """
                apiVersion: v1
                kind: List
                items:
                - {apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: a, namespace: x}, spec: {podSelector: {}}}
                - {apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: b, namespace: x}, spec: {podSelector: {}}}
                """);
        assertThat(run("convert", "-f", file.toString(), "-o", "json")).as(stderr).isZero();
        assertThat(ResourceCodec.get().parseAll(stdout)).extracting(r -> r.metadata().name()).containsExactly("a", "b");

        assertThat(runWithInput("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "convert", "-f", "-")).isEqualTo(1);
        assertThat(stderr).contains("unknown resource type (Pod) and/or version (v1)");
    }

    @Test
    void replaceOverwritesOnlyWhatExistsAndHonoursAResourceVersion() throws Exception {
        assertThat(run("apply", "-f", DEMO.toString())).isZero();
        Path tier = tmp.resolve("tier.yaml");
        Files.writeString(tier, """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: security}
                spec: {order: 42}
                """);
        assertThat(run("replace", "-f", tier.toString())).as(stderr).isZero();
        assertThat(stdout).contains("Successfully replaced 1 resource(s)");
        assertThat(run("get", "tier", "security", "-o", "yaml")).isZero();
        assertThat(stdout).contains("order: 42");

        Files.writeString(tier, """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: nowhere}
                spec: {order: 1}
                """);
        assertThat(run("replace", "-f", tier.toString())).isEqualTo(1);
        assertThat(stderr).contains("not found");

        Files.writeString(tier, """
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: security, resourceVersion: "1"}
                spec: {order: 7}
                """);
        assertThat(run("replace", "-f", tier.toString())).as("a stale resourceVersion").isEqualTo(1);
        assertThat(run("get", "tier", "security", "-o", "yaml")).isZero();
        assertThat(stdout).contains("order: 42");
    }

    @Test
    void patchMergesOrAppliesJsonPatchesAndValidatesTheResult() {
        assertThat(run("apply", "-f", DEMO.toString())).isZero();

        assertThat(run("patch", "globalnetworkset", "blocked-ranges", "-p", "{\"spec\":{\"nets\":[\"10.1.0.0/16\"]}}"))
                .as(stderr).isZero();
        assertThat(stdout).contains("Successfully patched 1 'GlobalNetworkSet' resource");
        assertThat(run("get", "globalnetworkset", "blocked-ranges", "-o", "yaml")).isZero();
        assertThat(stdout).contains("10.1.0.0/16").doesNotContain("labels: null");

        assertThat(run("patch", "globalnetworkset", "blocked-ranges", "--type=json",
                "--patch=[{\"op\":\"add\",\"path\":\"/spec/nets/-\",\"value\":\"10.2.0.0/16\"}]")).as(stderr).isZero();
        assertThat(run("get", "globalnetworkset", "blocked-ranges", "-o", "yaml")).isZero();
        assertThat(stdout).contains("10.1.0.0/16", "10.2.0.0/16");

        assertThat(run("patch", "tier", "security", "-t", "merge", "-p", "spec:\n  order: 77")).as("a YAML patch")
                .isZero();
        assertThat(run("get", "tier", "security", "-o", "yaml")).isZero();
        assertThat(stdout).contains("order: 77");

        assertThat(run("patch", "globalnetworkset", "blocked-ranges", "-p", "{\"spec\":{\"nets\":[\"10.1.0.300/16\"]}}"))
                .isEqualTo(1);
        assertThat(stderr).as("the result validated, naming the field").contains("spec.nets[0]");
        assertThat(run("patch", "tier", "security", "-p", "{\"metadata\":{\"name\":\"other\"}}")).isEqualTo(1);
        assertThat(stderr).contains("--patch: a patch may not change the kind, name or namespace");
        assertThat(run("patch", "tier", "security", "-t", "json", "-p", "[{\"op\":\"remove\",\"path\":\"/spec/nope\"}]"))
                .isEqualTo(1);
        assertThat(stderr).contains("--patch: ");
        assertThat(run("patch", "tier", "missing", "-p", "{}")).isEqualTo(1);
        assertThat(stderr).contains("not found");
        assertThat(run("patch", "tier", "security")).isEqualTo(2);
        assertThat(stderr).contains("patch needs -p PATCH");
        assertThat(run("patch", "tier", "security", "-p", "{}", "-t", "sideways")).isEqualTo(2);
        assertThat(run("get", "tier", "security", "-o", "yaml")).isZero();
        assertThat(stdout).as("nothing written by the refused patches").contains("order: 77");
    }

    @Test
    void labelSetsOverwritesOnlyWhenAskedAndRemoves() {
        assertThat(run("apply", "-f", DEMO.toString())).isZero();

        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team=net")).as(stderr).isZero();
        assertThat(stdout).contains("Successfully set label team on globalnetworksets blocked-ranges");
        assertThat(run("get", "globalnetworksets", "-l", "team == 'net'")).isZero();
        assertThat(stdout).contains("blocked-ranges");

        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team=sec")).isEqualTo(1);
        assertThat(stderr).contains("metadata.labels", "already has \"team\"", "--overwrite");
        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team=sec", "--overwrite")).as(stderr).isZero();
        assertThat(run("get", "globalnetworksets", "-l", "team == 'sec'")).isZero();
        assertThat(stdout).contains("blocked-ranges");

        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team", "--remove")).as(stderr).isZero();
        assertThat(stdout).contains("Successfully removed label team from globalnetworksets blocked-ranges");
        assertThat(run("get", "globalnetworksets", "-l", "has(team)")).isZero();
        assertThat(stdout).doesNotContain("blocked-ranges");
        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team", "--remove")).isEqualTo(1);
        assertThat(stderr).contains("has no label \"team\"");

        assertThat(run("label", "globalnetworksets", "blocked-ranges", "bad key=x")).isEqualTo(1);
        assertThat(stderr).contains("metadata.labels");
        assertThat(run("label", "globalnetworksets", "blocked-ranges", "team")).isEqualTo(2);
        assertThat(stderr).contains("is not key=value");
    }

    @Test
    void calicoNodeStatusIsAppliedReadAndValidated() {
        String request = """
                apiVersion: projectcalico.org/v3
                kind: CalicoNodeStatus
                metadata: {name: node-1-status}
                spec: {node: node-1, classes: [Agent, BGP, Routes], updatePeriodSeconds: 10}
                """;
        assertThat(runWithInput(request, "apply", "-f", "-")).as(stderr).isZero();
        assertThat(run("get", "caliconodestatus")).as(stderr).isZero();
        assertThat(stdout).isEqualTo("NAME            NODE     \nnode-1-status   node-1   \n\n");
        assertThat(run("get", "nodestatus", "-o", "wide")).as(stderr).isZero();
        assertThat(stdout).contains("NAME            NODE     CLASSES            \n", "node-1-status   node-1   Agent,BGP,Routes   \n");
        assertThat(run("get", "caliconodestatuses", "node-1-status", "-o", "yaml")).as(stderr).isZero();
        assertThat(stdout).contains("kind: CalicoNodeStatus", "node: node-1", "updatePeriodSeconds: 10");
        assertThat(runWithInput(request.replace("Routes", "Peers"), "apply", "-f", "-")).isEqualTo(1);
        assertThat(stderr).contains("spec.classes[2]", "\"Peers\" is not one of Agent, BGP, Routes");
        assertThat(run("node", "statuses")).isEqualTo(2);
        assertThat(stderr).contains("node takes one subcommand: status");
        assertThat(run("delete", "caliconodestatus", "node-1-status")).as(stderr).isZero();
    }

    @Test
    void versionPrintsTheClientAndTheClustersVersion() {
        assertThat(run("version")).as(stderr).isZero();
        assertThat(stdout).contains("Client Version:    v3.30.0-java", "Cluster Version:   unknown");
        assertThat(run("apply", "-f", DEMO.toString())).isZero();
        assertThat(run("version")).isZero();
        assertThat(stdout.lines()).containsExactly("Client Version:    v3.30.0-java", "Git commit:        unknown",
                "Cluster Version:   v3.30.0-java", "Cluster Type:      k8s,bgp,kdd");
    }
}
