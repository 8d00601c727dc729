package calico.apiserver.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.selector.Selector;
import calico.apiserver.errors.ApiException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LabelSelectorsTest {

    @Test
    void translatesEveryKubernetesRequirement() {
        assertThat(LabelSelectors.toCalico("")).isNull();
        String s = LabelSelectors.toCalico("app=web,tier!=db,env in (a, b),zone notin (x),has-it,!legacy");
        assertThat(s).isEqualTo("app == 'web' && tier != 'db' && env in {'a', 'b'} && zone not in {'x'} "
                + "&& has(has-it) && !has(legacy)");
        Selector sel = Selector.parse(s);
        assertThat(sel.matches(Map.of("app", "web", "env", "a", "has-it", ""))).isTrue();
        assertThat(sel.matches(Map.of("app", "web", "env", "a", "has-it", "", "legacy", "1"))).isFalse();
        assertThat(Selector.parse(LabelSelectors.toCalico("projectcalico.org/tier==gold"))
                .matches(Map.of("projectcalico.org/tier", "gold"))).isTrue();
    }

    @Test
    void malformedSelectorsAreBadRequests() {
        assertThatThrownBy(() -> LabelSelectors.toCalico("a=b,,c")).isInstanceOf(ApiException.class)
                .hasMessageStartingWith("unable to parse requirement");
        assertThatThrownBy(() -> LabelSelectors.toCalico("bad key=1")).isInstanceOf(ApiException.class)
                .hasMessageContaining("invalid label key");
    }
}
