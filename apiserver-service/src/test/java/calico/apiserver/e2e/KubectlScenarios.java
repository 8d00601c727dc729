package calico.apiserver.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.ResourceKind;
import calico.apiserver.discovery.KindCatalog;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the real kubectl must be able to do against the server; run on the memory datastore and
 * on a real etcd by the two subclasses. Each test uses its own object names.
 */
abstract class KubectlScenarios {

    static final Path MANIFESTS = Path.of("src/test/resources/manifests");

    abstract ApiServerFixture server();

    /** {@return kubectl with a bearer token}: straight to the server here; through kube-apiserver behind the aggregator. */
    Kubectl kubectl(String token) {
        return new Kubectl(server().url(), token);
    }

    Kubectl admin() {
        return kubectl(ApiServerFixture.ADMIN_TOKEN);
    }

    /**
     * The kinds the server's datastore derives from Kubernetes objects, which come and go with
     * them: none for a store of its own; on the kubernetes datastore Node (the Kubernetes Nodes),
     * Profile (Namespaces and ServiceAccounts) and WorkloadEndpoint (Pods), as in Calico.
     */
    Set<ResourceKind> derivedKinds() {
        return Set.of();
    }

    /**
     * Readies what Calico objects here live in or on: nothing for a store of its own; on the
     * kubernetes datastore the Namespaces and the Kubernetes Nodes (of Calico Nodes) must exist
     * first, as in Calico.
     */
    void prepare(List<String> namespaces, List<String> nodes) {
    }

    static String read(String name) throws Exception {
        return Files.readString(MANIFESTS.resolve(name));
    }

    static Kubectl.Result ok(Kubectl.Result r) {
        assertThat(r.exit()).as(r.all()).isZero();
        return r;
    }

    @Test
    void seedManifestsApplyAndASecondApplyChangesNothing() throws Exception {
        prepare(List.of(), List.of("node-rr-1"));
        Kubectl k = admin();
        for (String f : List.of("bgpconfiguration-node-mesh.yaml", "bgppeer-tor-switch.yaml",
                "felixconfiguration-default.yaml", "route-reflector.yaml")) {
            ok(k.run(null, "apply", "-f", MANIFESTS.resolve(f).toString()));
        }
        for (String f : List.of("bgppeer-tor-switch.yaml", "felixconfiguration-default.yaml", "route-reflector.yaml")) {
            Kubectl.Result again = ok(k.run(null, "apply", "-f", MANIFESTS.resolve(f).toString()));
            assertThat(again.out()).as(f).contains("unchanged").doesNotContain("configured");
        }
        Kubectl.Result table = ok(k.run(null, "get", "bgppeers"));
        assertThat(table.out()).startsWith("NAME").contains("CREATED AT").contains("tor-switch-peer").contains("peer-to-rr");
        Kubectl.Result yaml = ok(k.run(null, "get", "felixconfigurations", "default", "-o", "yaml"));
        assertThat(yaml.out()).contains("kind: FelixConfiguration").contains("bpfEnabled: false")
                .contains("resourceVersion:").contains("uid:");
        Kubectl.Result json = ok(k.run(null, "get", "nodes.projectcalico.org", "node-rr-1", "-o", "json"));
        assertThat(json.out()).contains("\"routeReflectorClusterID\": \"224.0.0.1\"");
    }

    @Test
    void aBroadSetOfPoliciesAppliesAndListsInEveryFormat() throws Exception {
        prepare(List.of("shop"), List.of());
        Kubectl k = admin();
        Kubectl.Result r = ok(k.run(null, "apply", "-f", MANIFESTS.resolve("policies.yaml").toString()));
        assertThat(r.out()).contains("tier.projectcalico.org/security created")
                .contains("globalnetworkpolicy.projectcalico.org/security.deny-blocklist created")
                .contains("networkpolicy.projectcalico.org/allow-frontend created")
                .contains("ippool.projectcalico.org/pool-a created");
        assertThat(ok(k.run(null, "apply", "-f", MANIFESTS.resolve("policies.yaml").toString())).out())
                .doesNotContain("configured").doesNotContain("created");
        assertThat(ok(k.run(null, "get", "caliconetworkpolicies", "-n", "shop")).out())
                .contains("allow-frontend").contains("security.quarantine");
        assertThat(ok(k.run(null, "get", "cnp", "-A")).out()).startsWith("NAMESPACE").contains("shop");
        assertThat(ok(k.run(null, "get", "cnp", "-n", "shop", "-l", "team=web", "-o", "name")).out().trim())
                .isEqualTo("networkpolicy.projectcalico.org/allow-frontend");
        assertThat(ok(k.run(null, "get", "gnp", "security.deny-blocklist", "-o", "jsonpath={.spec.tier}")).out())
                .isEqualTo("security");
        assertThat(ok(k.run(null, "get", "ippools", "pool-a", "-o", "jsonpath={.spec.blockSize}")).out())
                .as("defaulted by calico-api validation").isEqualTo("26");
    }

    @Test
    void invalidManifestsAreRejectedWithEveryFieldError() throws Exception {
        Kubectl k = admin();
        Kubectl.Result r = k.run(null, "apply", "-f", MANIFESTS.resolve("invalid.yaml").toString());
        assertThat(r.exit()).isNotZero();
        assertThat(r.err()).contains("The GlobalNetworkPolicy \"broken\" is invalid")
                .contains("spec.selector").contains("spec.ingress[0].destination.ports[0]");
        assertThat(k.run(null, "get", "gnp", "broken").err()).contains("NotFound");

        Kubectl.Result unknown = k.run("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata: {name: typo}
                spec: {netz: [10.0.0.0/8]}
                """, "apply", "-f", "-");
        assertThat(unknown.exit()).isNotZero();
        assertThat(unknown.err()).contains("strict decoding error: unknown field \"spec.netz\"");
    }

    @Test
    void patchesDiffServerSideApplyExplainAndDelete() throws Exception {
        Kubectl k = admin();
        String gns = """
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata:
                  name: patch-me
                  labels: {a: "1"}
                spec:
                  nets: [10.1.0.0/16]
                """;
        ok(k.run(gns, "apply", "-f", "-"));
        Kubectl.Result diff = k.run(gns.replace("10.1.0.0/16", "10.2.0.0/16"), "diff", "-f", "-");
        assertThat(diff.exit()).as(diff.all()).isEqualTo(1);
        assertThat(diff.out()).contains("-  - 10.1.0.0/16").contains("+  - 10.2.0.0/16");
        assertThat(ok(k.run(null, "get", "globalnetworksets", "patch-me", "-o", "jsonpath={.spec.nets[0]}")).out())
                .as("diff is a dry run").isEqualTo("10.1.0.0/16");

        ok(k.run(gns.replace("10.1.0.0/16", "10.2.0.0/16"), "apply", "-f", "-"));
        assertThat(ok(k.run(null, "get", "globalnetworksets", "patch-me", "-o", "jsonpath={.spec.nets}")).out())
                .isEqualTo("[\"10.2.0.0/16\"]");

        ok(k.run(null, "patch", "globalnetworksets", "patch-me", "--type", "merge", "-p", "{\"metadata\":{\"labels\":{\"b\":\"2\"}}}"));
        ok(k.run(null, "patch", "globalnetworksets", "patch-me", "--type", "json", "-p",
                "[{\"op\":\"add\",\"path\":\"/spec/nets/-\",\"value\":\"10.3.0.0/16\"}]"));
        Kubectl.Result got = ok(k.run(null, "get", "globalnetworksets", "patch-me", "-o",
                "jsonpath={.metadata.labels.a}{.metadata.labels.b} {.spec.nets}"));
        assertThat(got.out()).isEqualTo("12 [\"10.2.0.0/16\",\"10.3.0.0/16\"]");

        Kubectl.Result ssa = ok(k.run("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata: {name: ssa-set}
                spec: {nets: [10.9.0.0/16]}
                """, "apply", "--server-side", "-f", "-"));
        assertThat(ssa.out()).contains("serverside-applied");
        ok(k.run("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkSet
                metadata: {name: ssa-set, labels: {x: "z"}}
                spec: {nets: [10.8.0.0/16]}
                """, "apply", "--server-side", "-f", "-"));
        assertThat(ok(k.run(null, "get", "globalnetworksets", "ssa-set", "-o",
                "jsonpath={.metadata.labels.x} {.spec.nets}")).out()).isEqualTo("z [\"10.8.0.0/16\"]");

        Kubectl.Result explain = ok(k.run(null, "explain", "globalnetworkpolicies.spec.ingress"));
        assertThat(explain.out()).contains("KIND:       GlobalNetworkPolicy").contains("action");
        // kubectl wraps descriptions at its own width: compare with the whitespace folded.
        String folded = explain.out().replaceAll("\\s+", " ");
        assertThat(folded).contains("DESCRIPTION: The rules applied, in the order listed, to traffic arriving at the "
                        + "selected endpoints.")
                .contains("action <string> enum: Allow, Deny, Log, Pass What a matching packet gets: Allow")
                .contains("source <EntityRule> Criteria the sender of the packet must meet.");
        String action = ok(k.run(null, "explain", "gnp.spec.ingress.action")).out().replaceAll("\\s+", " ");
        assertThat(action).contains("FIELD: action <string>").contains("Pass (skip the rest of this tier and go on to "
                + "the next tier)");
        assertThat(ok(k.run(null, "explain", "globalnetworkpolicy")).out().replaceAll("\\s+", " "))
                .contains("A cluster-wide set of ordered allow/deny rules");

        // Paged with one item a page: kubectl follows the continue tokens to the end.
        assertThat(ok(k.run(null, "get", "globalnetworksets", "--chunk-size=1", "-o", "name")).out())
                .contains("globalnetworkset.projectcalico.org/patch-me").contains("globalnetworkset.projectcalico.org/ssa-set");

        assertThat(ok(k.run(null, "delete", "globalnetworksets", "patch-me", "ssa-set")).out())
                .contains("globalnetworkset.projectcalico.org \"patch-me\" deleted");
        assertThat(k.run(null, "get", "globalnetworksets", "patch-me").err())
                .contains("globalnetworksets.projectcalico.org \"patch-me\" not found");
    }

    static final String SSA_SET = """
            apiVersion: projectcalico.org/v3
            kind: GlobalNetworkSet
            metadata: {name: ssa-owned, labels: {x: a}}
            spec: {nets: [10.7.0.0/16]}
            """;

    /** The object's managedFields as JSON, with kubectl's own flag to show them. */
    static com.fasterxml.jackson.databind.JsonNode managed(Kubectl k, String name) throws Exception {
        String json = ok(k.run(null, "get", "globalnetworksets", name, "-o", "json", "--show-managed-fields")).out();
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
    }

    @Test
    void serverSideApplyKeepsManagedFieldsConflictsAndForces() throws Exception {
        Kubectl k = admin();
        assertThat(ok(k.run(SSA_SET, "apply", "--server-side", "-f", "-")).out()).contains("serverside-applied");
        var obj = managed(k, "ssa-owned");
        var entry = obj.path("metadata").path("managedFields").get(0);
        assertThat(entry.path("manager").asText()).isEqualTo("kubectl");
        assertThat(entry.path("operation").asText()).isEqualTo("Apply");
        assertThat(entry.path("apiVersion").asText()).isEqualTo("projectcalico.org/v3");
        assertThat(entry.path("fieldsType").asText()).isEqualTo("FieldsV1");
        assertThat(entry.path("time").asText()).isNotEmpty();
        assertThat(entry.path("fieldsV1").toString())
                .isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:x\":{}}},\"f:spec\":{\"f:nets\":{}}}");
        // The same apply again: accepted, the manager's set (and so its time) unchanged.
        ok(k.run(SSA_SET, "apply", "--server-side", "-f", "-"));
        assertThat(managed(k, "ssa-owned").path("metadata").path("managedFields").get(0).path("time").asText())
                .isEqualTo(entry.path("time").asText());

        // Another manager changing a field kubectl owns: 409 with kube's message, nothing stored.
        String unlabelled = SSA_SET.replace("metadata: {name: ssa-owned, labels: {x: a}}", "metadata: {name: ssa-owned}");
        String other = unlabelled.replace("10.7.0.0/16", "10.6.0.0/16");
        Kubectl.Result conflict = k.run(other, "apply", "--server-side", "--field-manager=other", "-f", "-");
        assertThat(conflict.exit()).as(conflict.all()).isNotZero();
        assertThat(conflict.err()).contains("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.nets");
        assertThat(ok(k.run(null, "get", "globalnetworksets", "ssa-owned", "-o", "jsonpath={.spec.nets}")).out())
                .isEqualTo("[\"10.7.0.0/16\"]");

        // Forced: the other manager takes spec.nets; kubectl keeps only the label.
        ok(k.run(other, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-"));
        var fields = managed(k, "ssa-owned").path("metadata").path("managedFields");
        assertThat(fields.size()).isEqualTo(2);
        assertThat(fields.get(0).path("fieldsV1").toString()).isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
        assertThat(fields.get(1).path("manager").asText()).isEqualTo("other");
        assertThat(fields.get(1).path("fieldsV1").toString()).isEqualTo("{\"f:spec\":{\"f:nets\":{}}}");

        // kubectl stops applying the label (and forces the nets back): nobody else owns the label, so it goes.
        ok(k.run(unlabelled, "apply", "--server-side", "--force-conflicts", "-f", "-"));
        assertThat(ok(k.run(null, "get", "globalnetworksets", "ssa-owned", "-o",
                "jsonpath={.metadata.labels} {.spec.nets}")).out()).isEqualTo(" [\"10.7.0.0/16\"]");

        // A patch is an Update by kubectl-patch owning what it changed.
        ok(k.run(null, "patch", "globalnetworksets", "ssa-owned", "--type", "merge", "-p",
                "{\"metadata\":{\"labels\":{\"p\":\"1\"}}}"));
        var afterPatch = managed(k, "ssa-owned").path("metadata").path("managedFields");
        var last = afterPatch.get(afterPatch.size() - 1);
        assertThat(last.path("manager").asText()).isEqualTo("kubectl-patch");
        assertThat(last.path("operation").asText()).isEqualTo("Update");
        assertThat(last.path("fieldsV1").toString()).isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:p\":{}}}}");
        // Without --show-managed-fields kubectl hides them, as it does for kube's own objects.
        assertThat(ok(k.run(null, "get", "globalnetworksets", "ssa-owned", "-o", "yaml")).out()).doesNotContain("managedFields");
        ok(k.run(null, "delete", "globalnetworksets", "ssa-owned"));
    }

    @Test
    void getWatchSeesChangesFromAnotherClient() throws Exception {
        prepare(List.of("watchns"), List.of());
        Kubectl watcher = admin();
        Kubectl other = admin();
        Path out = Files.createTempFile(watcher.home(), "watch", ".txt");
        ok(other.run("""
                apiVersion: projectcalico.org/v3
                kind: NetworkSet
                metadata: {name: watched-0, namespace: watchns}
                spec: {nets: [10.0.0.0/24]}
                """, "apply", "-f", "-"));
        Process p = watcher.start(out, "get", "networksets", "-n", "watchns", "-w", "--output-watch-events");
        try {
            awaitContent(out, "watched-0", Duration.ofSeconds(60));
            ok(other.run("""
                    apiVersion: projectcalico.org/v3
                    kind: NetworkSet
                    metadata: {name: watched-1, namespace: watchns}
                    spec: {nets: [10.0.1.0/24]}
                    """, "apply", "-f", "-"));
            ok(other.run(null, "delete", "networksets", "-n", "watchns", "watched-0"));
            awaitContent(out, "DELETED", Duration.ofSeconds(60));
            String seen = Files.readString(out);
            assertThat(seen).startsWith("EVENT").containsPattern("ADDED +watched-1 ").containsPattern("DELETED +watched-0 ");
        } finally {
            p.destroy();
        }
    }

    @Test
    void aUserWithoutAccessToATierIsDeniedItsPolicies() throws Exception {
        Kubectl k = admin();
        ok(k.run("""
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: allowed}
                spec: {order: 200}
                ---
                apiVersion: projectcalico.org/v3
                kind: Tier
                metadata: {name: secret}
                spec: {order: 300}
                ---
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: secret.hidden}
                spec: {tier: secret, selector: all()}
                """, "apply", "-f", "-"));
        Kubectl alice = kubectl(ApiServerFixture.ALICE_TOKEN);
        Kubectl.Result denied = alice.run(null, "get", "gnp", "secret.hidden");
        assertThat(denied.exit()).isNotZero();
        assertThat(denied.err()).contains("Forbidden").contains("secret");
        Kubectl.Result deniedCreate = alice.run("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: secret.sneaky}
                spec: {tier: secret, selector: all()}
                """, "create", "-f", "-");
        assertThat(deniedCreate.err()).contains("Forbidden");
        ok(alice.run("""
                apiVersion: projectcalico.org/v3
                kind: GlobalNetworkPolicy
                metadata: {name: allowed.mine}
                spec: {tier: allowed, selector: all()}
                """, "create", "-f", "-"));
        Kubectl.Result list = ok(alice.run(null, "get", "gnp", "-o", "name"));
        assertThat(list.out()).contains("allowed.mine").doesNotContain("secret.hidden");
        Kubectl bob = kubectl("bob-token");
        assertThat(bob.run(null, "get", "tiers").err()).contains("Forbidden");
        Kubectl nobody = kubectl("no-such-token");
        assertThat(nobody.run(null, "get", "tiers").err()).contains("the server has asked for the client to provide credentials");
    }

    /**
     * Every served kind: one object each from every-kind.yaml, through each kubectl verb; the
     * kinds the datastore derives (see {@link #derivedKinds()}) are left out here.
     */
    @Test
    void everyKindAppliesReadsDiffsExplainsWatchesAndDeletes() throws Exception {
        Kubectl k = admin();
        List<KindObject> all = KindObject.read(MANIFESTS.resolve("every-kind.yaml"));
        assertThat(all.stream().map(KindObject::kind).sorted().toList()).as("one object of every served kind")
                .isEqualTo(KindCatalog.kinds().stream().map(ResourceKind::kind).sorted().toList());
        prepare(List.of("ek"), List.of());
        List<KindObject> objects = all.stream()
                .filter(o -> !derivedKinds().contains(ResourceKind.byKind(o.kind()).orElseThrow())).toList();
        Path manifest = Files.createTempFile(k.home(), "every-kind", ".yaml");
        Files.writeString(manifest, String.join("---\n", objects.stream().map(KindObject::yaml).toList()));
        Kubectl.Result created = ok(k.run(null, "apply", "-f", manifest.toString()));
        for (KindObject o : objects) {
            assertThat(created.out()).contains(o.ref() + " created");
        }
        String yaml = ok(k.run(null, "get", "-f", manifest.toString(), "-o", "yaml")).out();
        for (KindObject o : objects) {
            assertThat(yaml).contains("kind: " + o.kind() + "\n").contains("name: " + o.name() + "\n");
        }

        // Every object gains a label: diff shows each change (and stores none), server-side apply makes them.
        Path changed = Files.createTempFile(k.home(), "every-kind-changed", ".yaml");
        Files.writeString(changed, Files.readString(manifest).replaceAll("(?m)^metadata: \\{name: ",
                "metadata: {labels: {ek: changed}, name: "));
        Kubectl.Result diff = k.run(null, "diff", "-f", changed.toString());
        assertThat(diff.exit()).as(diff.all()).isEqualTo(1);
        assertThat(diff.out().split("\n")).filteredOn(line -> line.equals("+    ek: changed")).hasSize(objects.size());
        assertThat(ok(k.run(null, "get", "-f", manifest.toString(), "-o", "name", "-l", "ek=changed")).out()).isEmpty();
        Kubectl.Result ssa = ok(k.run(null, "apply", "--server-side", "-f", changed.toString()));
        for (KindObject o : objects) {
            assertThat(ssa.out()).contains(o.ref() + " serverside-applied");
        }

        for (KindObject o : all) {
            // The group named: behind kube-apiserver, networkpolicies and nodes are Kubernetes' own first.
            assertThat(ok(k.run(null, "explain", o.plural(), "--api-version=projectcalico.org/v3")).out()).as(o.kind())
                    .contains("KIND:       " + o.kind() + "\n").contains("VERSION:    v3");
        }

        // A watch per kind sees its object, then its deletion.
        List<Process> watches = new ArrayList<>();
        List<Path> outputs = new ArrayList<>();
        try {
            for (KindObject o : objects) {
                Path out = Files.createTempFile(k.home(), "watch-" + o.plural(), ".txt");
                outputs.add(out);
                watches.add(k.start(out, "get", o.plural() + ".projectcalico.org", "-A", "-w", "--output-watch-events"));
            }
            for (int i = 0; i < objects.size(); i++) {
                awaitContent(outputs.get(i), " " + objects.get(i).name() + " ", Duration.ofSeconds(60));
            }
            Kubectl.Result deleted = ok(k.run(null, "delete", "-f", manifest.toString()));
            for (int i = 0; i < objects.size(); i++) {
                KindObject o = objects.get(i);
                assertThat(deleted.out()).contains(o.kind().toLowerCase(Locale.ROOT) + ".projectcalico.org \""
                        + o.name() + "\" deleted");
                awaitContent(outputs.get(i), "DELETED", Duration.ofSeconds(60));
                assertThat(Files.readString(outputs.get(i))).as(o.kind())
                        .containsPattern("DELETED +(ek +)?" + Pattern.quote(o.name()) + " ");
            }
        } finally {
            watches.forEach(Process::destroy);
        }
        Kubectl.Result gone = k.run(null, "get", "-f", manifest.toString(), "-o", "name");
        assertThat(gone.out()).isEmpty();
        assertThat(gone.err().split("\n")).filteredOn(line -> line.contains("NotFound")).hasSize(objects.size());
    }

    /** A document of a manifest: its text, kind, name and the kind's plural. */
    record KindObject(String yaml, String kind, String name, String plural) {

        private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

        static List<KindObject> read(Path manifest) throws Exception {
            List<KindObject> out = new ArrayList<>();
            for (String doc : Files.readString(manifest).split("(?m)^---\n")) {
                JsonNode tree = YAML.readTree(doc);
                if (tree == null || !tree.has("kind")) {
                    continue;
                }
                String kind = tree.path("kind").asText();
                out.add(new KindObject(doc, kind, tree.path("metadata").path("name").asText(),
                        ResourceKind.byKind(kind).orElseThrow().plural()));
            }
            return out;
        }

        /** {@code <singular>.projectcalico.org/<name>}, as kubectl reports what it did. */
        String ref() {
            return kind.toLowerCase(Locale.ROOT) + ".projectcalico.org/" + name;
        }
    }

    static void awaitContent(Path file, String text, Duration timeout) throws Exception {
        try {
            Await.until("\"" + text + "\" in " + file, timeout, () -> {
                try {
                    return Files.readString(file).contains(text);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        } catch (AssertionError e) {
            throw new AssertionError("no \"" + text + "\" in " + Files.readString(file), e);
        }
    }
}
