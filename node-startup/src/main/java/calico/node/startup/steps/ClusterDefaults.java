package calico.node.startup.steps;

import calico.api.codec.ResourceCodec;
import calico.api.model.Action;
import calico.api.model.BGPConfiguration;
import calico.api.model.BGPConfigurationSpec;
import calico.api.model.ClusterInformation;
import calico.api.model.ClusterInformationSpec;
import calico.api.model.FelixConfiguration;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.model.TierSpec;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * What every Calico cluster has once a node started, as libcalico-go's {@code EnsureInitialized} and
 * calico-node's {@code ensureDefaultConfig} make it: ClusterInformation {@code default}
 * ({@code datastoreReady: true} unless someone set it false, a {@code clusterGUID} chosen once and
 * kept, {@code calicoVersion}, the cluster types merged), the {@code default}, {@code kube-admin} and
 * {@code kube-baseline} tiers, FelixConfiguration
 * {@code default} ({@code reportingInterval: 0s}, {@code logSeverityScreen: Info} where unset), on etcd
 * the node's own {@code node.<name>} FelixConfiguration ({@code defaultEndpointToHostAction: Return}
 * where unset), and BGPConfiguration and IPAMConfiguration {@code default} when absent. Anything
 * already set is kept; nothing is written when nothing is missing.
 */
final class ClusterDefaults {

    static final String DEFAULT = "default";

    private final Datastore datastore;
    private final ResourceCodec codec = ResourceCodec.get();

    ClusterDefaults(Datastore datastore) {
        this.datastore = datastore;
    }

    void ensure(ClusterSettings s, String nodeName, Changes changes) {
        clusterInformation(s, changes);
        createIfAbsent(new Tier(ObjectMeta.named(DEFAULT), new TierSpec(1_000_000d, Action.Deny)), changes);
        // Calico >= 3.30's built-in tiers for admin policies, before and after the default tier.
        createIfAbsent(new Tier(ObjectMeta.named("kube-admin"), new TierSpec(1_000d, Action.Pass)), changes);
        createIfAbsent(new Tier(ObjectMeta.named("kube-baseline"), new TierSpec(10_000_000d, Action.Pass)), changes);
        felixConfiguration(DEFAULT, "{\"reportingInterval\":\"0s\",\"logSeverityScreen\":\"Info\"}", changes);
        if (!s.kubernetesDatastore()) {
            felixConfiguration("node." + nodeName, "{\"defaultEndpointToHostAction\":\"Return\"}", changes);
        }
        createIfAbsent(new BGPConfiguration(ObjectMeta.named(DEFAULT), new BGPConfigurationSpec(null, null, null, null,
                null, null, null, null, null, null, null, null, null, null, null, null)), changes);
        createIfAbsent(new IPAMConfiguration(ObjectMeta.named(DEFAULT), new IPAMConfigurationSpec(false, true, 0)),
                changes);
    }

    private void clusterInformation(ClusterSettings s, Changes changes) {
        String type = s.kubernetesDatastore()
                ? (s.clusterType().isEmpty() ? "kdd" : trimComma(s.clusterType()) + ",kdd") : s.clusterType();
        ResourceKey key = ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, DEFAULT);
        for (int attempt = 0; ; attempt++) {
            Optional<Resource> stored = datastore.get(key);
            if (stored.isEmpty()) {
                try {
                    datastore.create(new ClusterInformation(ObjectMeta.named(DEFAULT), new ClusterInformationSpec(
                            newGuid(), type.isEmpty() ? null : type, s.calicoVersion(), true, null)));
                    changes.add("created ClusterInformation default (datastoreReady: true)");
                    return;
                } catch (DatastoreException.AlreadyExists raced) {
                    continue; // another node's start-up made it: merge into theirs
                }
            }
            ClusterInformation ci = (ClusterInformation) stored.get();
            ClusterInformationSpec c = ci.spec() == null ? new ClusterInformationSpec(null, null, null, null, null)
                    : ci.spec();
            ClusterInformationSpec want = new ClusterInformationSpec(
                    c.clusterGUID() == null || c.clusterGUID().isEmpty() ? newGuid() : c.clusterGUID(),
                    mergeTypes(c.clusterType(), type),
                    s.calicoVersion().isEmpty() ? c.calicoVersion() : s.calicoVersion(),
                    c.datastoreReady() == null ? Boolean.TRUE : c.datastoreReady(), c.variant());
            if (want.equals(c)) {
                return;
            }
            try {
                datastore.update(new ClusterInformation(ci.metadata(), want));
                changes.add("updated ClusterInformation default (calicoVersion " + want.calicoVersion()
                        + ", clusterType " + want.clusterType() + ")");
                return;
            } catch (DatastoreException.Conflict raced) {
                if (attempt > 10) {
                    throw raced;
                }
            }
        }
    }

    /** Creates the FelixConfiguration with {@code defaults}, or sets those of them it lacks. */
    private void felixConfiguration(String name, String defaults, Changes changes) {
        ObjectNode wanted = (ObjectNode) read(defaults);
        ResourceKey key = ResourceKey.of(ResourceKind.FELIX_CONFIGURATION, name);
        Optional<Resource> stored = datastore.get(key);
        if (stored.isEmpty()) {
            ObjectNode tree = codec.jsonMapper().createObjectNode();
            tree.put("apiVersion", "projectcalico.org/v3").put("kind", "FelixConfiguration");
            tree.putObject("metadata").put("name", name);
            tree.set("spec", wanted);
            createIfAbsent(codec.fromTree(tree, "").get(0), changes);
            return;
        }
        ObjectNode tree = (ObjectNode) codec.toTree(stored.get());
        ObjectNode spec = tree.with("spec");
        List<String> added = new ArrayList<>();
        wanted.fieldNames().forEachRemaining(f -> {
            if (!spec.hasNonNull(f) || spec.get(f).asText().isEmpty()) {
                spec.set(f, wanted.get(f));
                added.add(f);
            }
        });
        if (added.isEmpty()) {
            return;
        }
        try {
            datastore.update((FelixConfiguration) codec.fromTree(tree, "").get(0));
            changes.add("updated FelixConfiguration " + name + " (set " + String.join(", ", added) + ")");
        } catch (DatastoreException.Conflict raced) {
            // Someone wrote it meanwhile; Calico ignores the conflict too (their values stand).
        }
    }

    private void createIfAbsent(Resource r, Changes changes) {
        if (datastore.get(r.key()).isPresent()) {
            return;
        }
        try {
            datastore.create(r);
            changes.add("created " + r.key());
        } catch (DatastoreException.AlreadyExists raced) {
            // Another node's start-up made it first.
        }
    }

    private com.fasterxml.jackson.databind.JsonNode read(String json) {
        try {
            return codec.jsonMapper().readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("constant JSON", e);
        }
    }

    private static String mergeTypes(String existing, String local) {
        if (local.isEmpty()) {
            return existing;
        }
        if (existing == null || existing.isEmpty()) {
            return local;
        }
        Set<String> all = new LinkedHashSet<>(Arrays.asList(existing.split(",")));
        all.addAll(Arrays.asList(local.split(",")));
        return String.join(",", all);
    }

    private static String trimComma(String s) {
        return s.endsWith(",") ? s.substring(0, s.length() - 1) : s;
    }

    /** 32 hex digits of a random UUID, Calico's clusterGUID form. */
    private static String newGuid() {
        UUID u = UUID.randomUUID();
        return HexFormat.of().formatHex(java.nio.ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
                .putLong(u.getLeastSignificantBits()).array());
    }
}
