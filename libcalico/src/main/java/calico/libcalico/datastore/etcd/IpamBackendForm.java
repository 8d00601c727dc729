package calico.libcalico.datastore.etcd;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;

/**
 * The IPAM kinds in Calico's backend form, the key and value etcd holds for each (see {@link IpamEtcdLayout}):
 * what {@code calicoctl datastore migrate} writes and reads, so that its IPAM part is the same whichever side
 * wrote it.
 */
public final class IpamBackendForm {

    private IpamBackendForm() {
    }

    /** {@return the etcd key of {@code r}}, an IPAM resource. */
    public static String key(Resource r) {
        return IpamEtcdLayout.path(r);
    }

    /** {@return the value Calico stores for {@code r}}, an IPAM resource. */
    public static JsonNode value(Resource r, ResourceCodec codec) {
        try {
            return codec.jsonMapper().readTree(IpamEtcdLayout.encode(r, codec.jsonMapper()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@return the resource an etcd key and its value hold}, empty when the key is not of an IPAM kind.
     *
     * @throws calico.api.codec.ResourceParseException when the value is not Calico's
     */
    public static Optional<Resource> read(String key, JsonNode value, ResourceCodec codec) {
        Optional<ResourceKind> kind = IpamEtcdLayout.parse(key).map(k -> k.kind());
        if (kind.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(IpamEtcdLayout.decode(kind.get(), key, codec.jsonMapper().writeValueAsBytes(value), 0, codec));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
