package calico.libcalico.typha;

import calico.api.codec.ResourceCodec;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.Update;
import calico.libcalico.syncer.UpdateType;
import calico.libcalico.typha.proto.KV;
import com.google.protobuf.ByteString;

/** Converts between the syncer's {@link Update} and the wire's {@link KV}; values travel as codec JSON. */
public final class KvCodec {

    private KvCodec() {
    }

    public static KV toKv(Update u) {
        KV.Builder b = KV.newBuilder()
                .setKind(u.key().kind().kind())
                .setNamespace(u.key().namespace() == null ? "" : u.key().namespace())
                .setName(u.key().name())
                .setRevision(u.revision())
                .setType(switch (u.type()) {
                    case NEW -> calico.libcalico.typha.proto.UpdateType.NEW;
                    case UPDATED -> calico.libcalico.typha.proto.UpdateType.UPDATED;
                    case DELETED -> calico.libcalico.typha.proto.UpdateType.DELETED;
                });
        if (u.value() != null) {
            b.setValueJson(ByteString.copyFrom(ResourceCodec.get().toJsonBytes(u.value())));
        }
        return b.build();
    }

    /** {@return the key of a wire KV}; an unknown kind or a missing name is an {@link IllegalArgumentException}. */
    public static ResourceKey key(KV kv) {
        ResourceKind kind = ResourceKind.byKind(kv.getKind())
                .orElseThrow(() -> new IllegalArgumentException("KV.kind: unknown kind \"" + kv.getKind() + "\""));
        if (kv.getName().isEmpty()) {
            throw new IllegalArgumentException("KV.name: required");
        }
        return ResourceKey.of(kind, kv.getNamespace().isEmpty() ? null : kv.getNamespace(), kv.getName());
    }

    /** {@return the resource a KV carries, or null for a deletion (empty value)} */
    public static Resource value(ResourceKey key, KV kv) {
        if (kv.getValueJson().isEmpty()) {
            return null;
        }
        Resource r = ResourceCodec.get().read(key.kind(), kv.getValueJson().toByteArray());
        if (!r.key().equals(key)) {
            throw new IllegalArgumentException("KV.value_json: resource " + r.key() + " does not match key " + key);
        }
        return r;
    }

    /** {@return the update a KV describes, with the type given by the caller's view} */
    public static Update toUpdate(KV kv, UpdateType type) {
        ResourceKey key = key(kv);
        Resource value = type == UpdateType.DELETED ? null : value(key, kv);
        return new Update(key, value, kv.getRevision(), type);
    }
}
