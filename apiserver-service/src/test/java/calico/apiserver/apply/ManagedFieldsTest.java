package calico.apiserver.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.apiserver.errors.ApiException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ManagedFieldsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final Instant T1 = Instant.parse("2026-12-01T10:00:00Z");
    static final Instant T2 = Instant.parse("2026-12-01T11:00:00Z");

    static ObjectNode obj(String json) {
        try {
            return (ObjectNode) JSON.readTree(json.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static final String LIVE_HEAD = "{'apiVersion':'projectcalico.org/v3','kind':'GlobalNetworkSet','metadata':{'name':'s','uid':'u',"
            + "'resourceVersion':'5'";

    /** Merges like the handler: the configuration's fields over the live object's. */
    static ObjectNode merge(ObjectNode live, ObjectNode config) {
        ObjectNode m = live.deepCopy();
        config.fields().forEachRemaining(f -> {
            if (f.getValue().isObject() && m.get(f.getKey()) instanceof ObjectNode inner) {
                m.set(f.getKey(), merge(inner, (ObjectNode) f.getValue()));
            } else {
                m.set(f.getKey(), f.getValue());
            }
        });
        return m;
    }

    static JsonNode entry(ObjectNode o, int i) {
        return o.path("metadata").path("managedFields").get(i);
    }

    @Test
    void createRecordsAnUpdateOwningEverySetFieldButIdentity() {
        ObjectNode created = obj(LIVE_HEAD + ",'labels':{'a':'1'}},'spec':{'nets':['10.0.0.0/8']}}");
        ManagedFields.update(null, created, "kubectl-create", T1);
        JsonNode e = entry(created, 0);
        assertThat(e.path("manager").asText()).isEqualTo("kubectl-create");
        assertThat(e.path("operation").asText()).isEqualTo("Update");
        assertThat(e.path("apiVersion").asText()).isEqualTo("projectcalico.org/v3");
        assertThat(e.path("time").asText()).isEqualTo("2026-12-01T10:00:00Z");
        assertThat(e.path("fieldsType").asText()).isEqualTo("FieldsV1");
        assertThat(e.path("fieldsV1").toString()).isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}},\"f:spec\":{\"f:nets\":{}}}");
    }

    @Test
    void aSecondManagerChangingAnOwnedFieldConflictsUnlessForced() {
        ObjectNode config = obj("{'apiVersion':'projectcalico.org/v3','kind':'GlobalNetworkSet','metadata':{'name':'s',"
                + "'labels':{'x':'a'}},'spec':{'nets':['10.0.0.0/8']}}");
        ObjectNode live = ManagedFields.apply(null, config, config, "first", false, T1);

        ObjectNode same = obj("{'metadata':{'name':'s'},'spec':{'nets':['10.0.0.0/8']}}");
        ObjectNode shared = ManagedFields.apply(live, same, merge(live, same), "second", false, T2);
        assertThat(shared.path("metadata").path("managedFields").size()).as("same value: shared, no conflict").isEqualTo(2);

        ObjectNode change = obj("{'metadata':{'name':'s'},'spec':{'nets':['192.168.0.0/16']}}");
        assertThatThrownBy(() -> ManagedFields.apply(live, change, merge(live, change), "second", false, T2))
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.code()).isEqualTo(409);
                    assertThat(e.reason()).isEqualTo("Conflict");
                    assertThat(e.getMessage()).isEqualTo("Apply failed with 1 conflict: conflict with \"first\": .spec.nets");
                    assertThat(e.toStatus().path("details").path("causes").get(0).toString()).isEqualTo(
                            "{\"reason\":\"FieldManagerConflict\",\"message\":\"conflict with \\\"first\\\"\",\"field\":\".spec.nets\"}");
                });

        ObjectNode forced = ManagedFields.apply(live, change, merge(live, change), "second", true, T2);
        assertThat(entry(forced, 0).path("manager").asText()).isEqualTo("first");
        assertThat(entry(forced, 0).path("fieldsV1").toString()).isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
        assertThat(entry(forced, 1).path("manager").asText()).isEqualTo("second");
        assertThat(entry(forced, 1).path("fieldsV1").toString()).isEqualTo("{\"f:spec\":{\"f:nets\":{}}}");
        assertThat(forced.path("spec").path("nets").get(0).asText()).isEqualTo("192.168.0.0/16");
    }

    @Test
    void conflictsWithSeveralManagersAreListedByManager() {
        ObjectNode live = obj(LIVE_HEAD + ",'labels':{'a':'1','b':'2'}},'spec':{'nets':['10.0.0.0/8']}}");
        ManagedFields.update(null, live, "zed", T1);
        ObjectNode config = obj("{'metadata':{'name':'s','labels':{'a':'9','b':'9'}},'spec':{'nets':['10.9.0.0/16']}}");
        assertThatThrownBy(() -> ManagedFields.apply(live, config, merge(live, config), "me", false, T2))
                .hasMessage("Apply failed with 3 conflicts: conflicts with \"zed\" using projectcalico.org/v3 at "
                        + "2026-12-01T10:00:00Z:\n- .metadata.labels.a\n- .metadata.labels.b\n- .spec.nets");
    }

    @Test
    void aFieldTheApplierStopsApplyingIsRemovedUnlessSomeoneElseOwnsIt() {
        ObjectNode config = obj("{'metadata':{'name':'s','labels':{'x':'a','y':'b'}},'spec':{'nets':['10.0.0.0/8']}}");
        ObjectNode live = ManagedFields.apply(null, config, config, "first", false, T1);
        // Another manager also sets y (same value: shared).
        ObjectNode other = obj("{'metadata':{'name':'s','labels':{'y':'b'}}}");
        live = ManagedFields.apply(live, other, merge(live, other), "second", false, T1);

        ObjectNode smaller = obj("{'metadata':{'name':'s'},'spec':{'nets':['10.0.0.0/8']}}");
        ObjectNode after = ManagedFields.apply(live, smaller, merge(live, smaller), "first", false, T2);
        assertThat(after.path("metadata").path("labels").has("x")).as("only first owned x").isFalse();
        assertThat(after.path("metadata").path("labels").path("y").asText()).as("second still owns y").isEqualTo("b");
        assertThat(after.path("spec").path("nets").size()).isEqualTo(1);
    }

    @Test
    void anUpdateTakesTheFieldsItChangesFromTheAppliers() {
        ObjectNode config = obj("{'metadata':{'name':'s','labels':{'x':'a'}},'spec':{'nets':['10.0.0.0/8']}}");
        ObjectNode live = ManagedFields.apply(null, config, config, "applier", false, T1);
        ObjectNode patched = live.deepCopy();
        ((ObjectNode) patched.path("spec")).putArray("nets").add("10.1.0.0/16");
        ManagedFields.update(live, patched, "kubectl-patch", T2);
        assertThat(entry(patched, 0).path("fieldsV1").toString()).isEqualTo("{\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
        assertThat(entry(patched, 1).path("manager").asText()).isEqualTo("kubectl-patch");
        assertThat(entry(patched, 1).path("operation").asText()).isEqualTo("Update");
        assertThat(entry(patched, 1).path("fieldsV1").toString()).isEqualTo("{\"f:spec\":{\"f:nets\":{}}}");

        ObjectNode again = ManagedFields.apply(patched, config, merge(patched, config), "applier", true, T2);
        assertThat(again.path("metadata").path("managedFields").size()).as("forced back: the updater owns nothing").isEqualTo(1);
        assertThat(entry(again, 0).path("time").asText()).as("its set grew: new time").isEqualTo("2026-12-01T11:00:00Z");
        ObjectNode noop = ManagedFields.apply(again, config, merge(again, config), "applier", false,
                Instant.parse("2026-12-01T12:00:00Z"));
        assertThat(entry(noop, 0).path("time").asText()).as("same set: time kept").isEqualTo("2026-12-01T11:00:00Z");
    }

    @Test
    void numbersCompareByValue() {
        assertThat(ManagedFields.same(JSON.getNodeFactory().numberNode(100), JSON.getNodeFactory().numberNode(100.0))).isTrue();
        assertThat(ManagedFields.same(JSON.getNodeFactory().numberNode(100), JSON.getNodeFactory().numberNode(101))).isFalse();
    }
}
