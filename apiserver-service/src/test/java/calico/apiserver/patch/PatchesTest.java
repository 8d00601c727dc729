package calico.apiserver.patch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.apiserver.errors.ApiException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class PatchesTest {

    static final ObjectMapper M = new ObjectMapper();

    static JsonNode j(String s) throws Exception {
        return M.readTree(s.replace('\'', '"'));
    }

    @Test
    void mergePatchFollowsRfc7386() throws Exception {
        JsonNode out = Patches.mergePatch(j("{'a':'b','c':{'d':'e','f':'g'},'l':[1,2]}"),
                j("{'a':'z','c':{'f':null},'l':[3]}"));
        assertThat(out).isEqualTo(j("{'a':'z','c':{'d':'e'},'l':[3]}"));
    }

    @Test
    void strategicMergeReplacesListsMergesMapsAndHonoursDirectives() throws Exception {
        JsonNode target = j("{'metadata':{'labels':{'a':'1','b':'2'}},'spec':{'nets':['x','y'],'sub':{'k':'v'}}}");
        JsonNode out = Patches.strategicMerge(target.deepCopy(), j("{'metadata':{'labels':{'b':null,'c':'3'}},"
                + "'spec':{'nets':['z'],'sub':{'$patch':'delete'},'$setElementOrder/nets':['z']}}"));
        assertThat(out).isEqualTo(j("{'metadata':{'labels':{'a':'1','c':'3'}},'spec':{'nets':['z']}}"));
        JsonNode replaced = Patches.strategicMerge(target.deepCopy(), j("{'metadata':{'labels':{'$patch':'replace','q':'1'}}}"));
        assertThat(replaced.path("metadata").path("labels")).isEqualTo(j("{'q':'1'}"));
        JsonNode pruned = Patches.strategicMerge(target.deepCopy(), j("{'spec':{'$deleteFromPrimitiveList/nets':['x']}}"));
        assertThat(pruned.path("spec").path("nets")).isEqualTo(j("['y']"));
        JsonNode retained = Patches.strategicMerge(target.deepCopy(), j("{'spec':{'$retainKeys':['sub']}}"));
        assertThat(retained.path("spec")).isEqualTo(j("{'sub':{'k':'v'}}"));
    }

    @Test
    void jsonPatchOperations() throws Exception {
        JsonNode doc = j("{'a':{'b':[1,2]},'c':'d'}");
        JsonNode out = Patches.jsonPatch(doc, j("[{'op':'add','path':'/a/b/1','value':9},"
                + "{'op':'remove','path':'/c'},{'op':'replace','path':'/a/b/0','value':0},"
                + "{'op':'copy','from':'/a/b','path':'/e'},{'op':'move','from':'/e','path':'/f'},"
                + "{'op':'test','path':'/f/2','value':2},{'op':'add','path':'/a/x~1y','value':true}]"));
        assertThat(out).isEqualTo(j("{'a':{'b':[0,9,2],'x/y':true},'f':[0,9,2]}"));
        assertThatThrownBy(() -> Patches.jsonPatch(j("{'a':1}"), j("[{'op':'test','path':'/a','value':2}]")))
                .isInstanceOf(ApiException.class).hasMessageContaining("testing value /a failed");
        assertThatThrownBy(() -> Patches.jsonPatch(j("{'a':1}"), j("[{'op':'remove','path':'/zz'}]")))
                .isInstanceOf(ApiException.class).satisfies(e -> assertThat(((ApiException) e).code()).isEqualTo(422));
    }
}
