package calico.apiserver.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.model.ResourceKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RbacRulesTest {

    static final String RULES = """
            kind: ClusterRole
            metadata: {name: reader}
            rules:
            - apiGroups: [projectcalico.org]
              resources: [globalnetworksets]
              verbs: [get, list]
            ---
            kind: Role
            metadata: {name: np-writer, namespace: shop}
            rules:
            - apiGroups: [projectcalico.org]
              resources: [networkpolicies]
              verbs: ["*"]
            - apiGroups: [projectcalico.org]
              resources: [tiers]
              resourceNames: [default]
              verbs: [get]
            ---
            kind: ClusterRoleBinding
            metadata: {name: readers}
            roleRef: {kind: ClusterRole, name: reader}
            subjects: [{kind: Group, name: readers}]
            ---
            kind: RoleBinding
            metadata: {name: np, namespace: shop}
            roleRef: {kind: Role, name: np-writer}
            subjects: [{kind: User, name: carol}, {kind: ServiceAccount, name: bot, namespace: ci}]
            """;

    @Test
    void bindingsGrantRolesInTheirScope() {
        RbacRules r = RbacRules.parse(RULES);
        User reader = new User("dan", "", List.of("readers"));
        User carol = new User("carol", "", List.of());
        assertThat(r.allows(reader, "list", "projectcalico.org", "globalnetworksets", null, null)).isTrue();
        assertThat(r.allows(reader, "delete", "projectcalico.org", "globalnetworksets", null, "x")).isFalse();
        assertThat(r.allows(carol, "create", "projectcalico.org", "networkpolicies", "shop", null)).isTrue();
        assertThat(r.allows(carol, "create", "projectcalico.org", "networkpolicies", "other", null)).isFalse();
        assertThat(r.allows(new User("system:serviceaccount:ci:bot", "", List.of()), "get", "projectcalico.org",
                "networkpolicies", "shop", "p")).isTrue();
        assertThat(r.allows(new User("root", "", List.of(User.MASTERS)), "delete", "x", "y", null, null)).isTrue();
        assertThat(RbacRules.none().allows(carol, "get", "projectcalico.org", "tiers", null, "default")).isFalse();
    }

    @Test
    void tierAccessNeedsGetOnTheTier() {
        Authorizer a = new Authorizer(RbacRules.parse(RULES));
        User carol = new User("carol", "", List.of());
        assertThat(a.tierAllows(carol, "create", ResourceKind.NETWORK_POLICY, "shop", "default"))
                .as("the Role is namespaced: get on cluster-scoped tiers is not granted by it").isFalse();
        assertThat(Authorizer.tierOfName("security.deny")).isEqualTo("security");
        assertThat(Authorizer.tierOfName("plain")).isEqualTo("default");
        assertThat(Authorizer.tierOfName("knp.default.x")).isEqualTo("default");
    }

    @Test
    void unsupportedKindsFailStartUp() {
        assertThatThrownBy(() -> RbacRules.parse("kind: Pod\nmetadata: {name: x}\n"))
                .hasMessageContaining("unsupported kind \"Pod\"");
    }

    @Test
    void tokenFileInKubeApiserverCsvFormat(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("tokens.csv");
        Files.writeString(f, "# comment\nt1,alice,100,\"ops,devs\"\nt2,bob,101\n");
        TokenFile t = TokenFile.read(f);
        assertThat(t.user("t1")).contains(new User("alice", "100", List.of("ops", "devs")));
        assertThat(t.user("t2")).contains(new User("bob", "101", List.of()));
        assertThat(t.user("t3")).isEmpty();
        Files.writeString(f, "only-a-token\n");
        assertThatThrownBy(() -> TokenFile.read(f)).hasMessageContaining("line 1");
    }
}
