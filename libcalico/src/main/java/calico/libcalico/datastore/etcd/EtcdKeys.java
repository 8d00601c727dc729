package calico.libcalico.datastore.etcd;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Calico's etcd key layout for {@code projectcalico.org/v3} resources:
 * {@code /calico/resources/v3/projectcalico.org/<plural>/[<namespace>/]<name>}; the IPAM kinds
 * (blocks, affinities, handles, configuration) live under {@code /calico/ipam/v2/} as Calico keeps
 * them ({@link IpamEtcdLayout}).
 *
 * <p>Prefixes end with {@code /} so that a range over namespace {@code a} never includes
 * namespace {@code ab}.
 */
final class EtcdKeys {

    static final String ROOT = "/calico/resources/v3/projectcalico.org/";

    private EtcdKeys() {
    }

    static ByteSequence key(ResourceKey key) {
        return bytes(path(key));
    }

    static String path(ResourceKey key) {
        if (IpamEtcdLayout.covers(key.kind())) {
            return IpamEtcdLayout.path(key).orElseThrow(() -> new IllegalArgumentException(
                    key + ": the key is found by listing " + IpamEtcdLayout.HOSTS));
        }
        return key.kind().namespaced()
                ? ROOT + key.kind().plural() + "/" + key.namespace() + "/" + key.name()
                : ROOT + key.kind().plural() + "/" + key.name();
    }

    /** {@return the prefix of every key of {@code kind}, or of one namespace of it}. */
    static ByteSequence prefix(ResourceKind kind, String namespace) {
        if (IpamEtcdLayout.covers(kind)) {
            return bytes(IpamEtcdLayout.prefix(kind));
        }
        String p = ROOT + kind.plural() + "/";
        if (kind.namespaced() && namespace != null && !namespace.isEmpty()) { // "" means all, like null
            p += namespace + "/";
        }
        return bytes(p);
    }

    /** {@return the resource key stored under {@code etcdKey}}, or empty when it is not a v3 resource key. */
    static Optional<ResourceKey> parse(ByteSequence etcdKey) {
        String k = etcdKey.toString(StandardCharsets.UTF_8);
        if (k.startsWith(IpamEtcdLayout.ROOT)) {
            return IpamEtcdLayout.parse(k);
        }
        if (!k.startsWith(ROOT)) {
            return Optional.empty();
        }
        String[] parts = k.substring(ROOT.length()).split("/", -1);
        Optional<ResourceKind> kind = ResourceKind.byPlural(parts[0]);
        if (kind.isEmpty()) {
            return Optional.empty();
        }
        boolean ns = kind.get().namespaced();
        if (parts.length != (ns ? 3 : 2) || java.util.Arrays.stream(parts).anyMatch(String::isEmpty)) {
            return Optional.empty();
        }
        return Optional.of(ns ? ResourceKey.of(kind.get(), parts[1], parts[2]) : ResourceKey.of(kind.get(), parts[1]));
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
