package calico.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class GoTemplateTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** An IPPoolList as calicoctl lists it, handed over in a slice. */
    private static JsonNode pools() throws Exception {
        return GoTemplate.slice(JSON.readTree("""
                {"kind": "IPPoolList", "apiVersion": "projectcalico.org/v3", "metadata": {"resourceVersion": "42"},
                 "items": [
                   {"kind": "IPPool", "apiVersion": "projectcalico.org/v3",
                    "metadata": {"name": "blue", "labels": {"zone": "a", "tier": "x"}},
                    "spec": {"cidr": "10.1.0.0/16", "ipipMode": "Always", "natOutgoing": true, "blockSize": 26,
                             "allowedUses": ["Workload", "Tunnel"]}},
                   {"kind": "IPPool", "apiVersion": "projectcalico.org/v3",
                    "metadata": {"name": "green"},
                    "spec": {"cidr": "10.2.0.0/16", "ipipMode": "Never", "natOutgoing": false, "blockSize": 24}}
                 ]}"""));
    }

    private static String run(String template) throws Exception {
        return GoTemplate.parse(template).execute(pools());
    }

    @Test
    void goFieldNamesReachTheJsonForm() throws Exception {
        assertThat(run("{{range .}}{{range .Items}}{{.ObjectMeta.Name}} {{.Spec.CIDR}} {{.Spec.IPIPMode}}\n{{end}}{{end}}"))
                .isEqualTo("blue 10.1.0.0/16 Always\ngreen 10.2.0.0/16 Never\n");
        assertThat(run("{{range .}}{{.Kind}} {{.TypeMeta.APIVersion}} {{.ListMeta.ResourceVersion}}{{end}}"))
                .as("TypeMeta is the object, ListMeta its metadata").isEqualTo("IPPoolList projectcalico.org/v3 42");
        assertThat(run("{{range .}}{{range .Items}}{{.Name}},{{end}}{{end}}")).as("metadata's fields are promoted")
                .isEqualTo("blue,green,");
        assertThat(run("{{range .}}{{range .items}}{{.metadata.name}}{{end}}{{end}}")).as("JSON keys work too")
                .isEqualTo("bluegreen");
    }

    @Test
    void conditionalsVariablesAndFunctions() throws Exception {
        assertThat(run("{{range .}}{{range $i, $p := .Items}}{{$i}}:{{$p.Name}}{{if $p.Spec.NATOutgoing}} nat{{else}} no-nat{{end}};{{end}}{{end}}"))
                .isEqualTo("0:blue nat;1:green no-nat;");
        assertThat(run("{{range .}}{{len .Items}} {{(index .Items 1).Spec.BlockSize}} {{index (index .Items 0).Labels \"zone\"}}{{end}}"))
                .isEqualTo("2 24 a");
        assertThat(run("{{range .}}{{range .Items}}{{join .Spec.AllowedUses \",\"}}|{{end}}{{end}}"))
                .as("calicoctl's join; an absent list is empty").isEqualTo("Workload,Tunnel||");
        assertThat(run("{{range .}}{{range .Items}}{{if eq .Spec.IPIPMode \"Always\" \"CrossSubnet\"}}{{printf \"%s=%d \" .Name .Spec.BlockSize}}{{end}}{{end}}{{end}}"))
                .isEqualTo("blue=26 ");
        assertThat(run("{{range .}}{{range .Items}}{{with .Labels}}{{.tier}}{{else}}none{{end}} {{end}}{{end}}"))
                .isEqualTo("x none ");
        assertThat(run("{{range .}}{{range .Items}}{{.Name | printf \"<%s>\"}}{{end}}{{end}}")).isEqualTo("<blue><green>");
        assertThat(run("{{range .}}{{range .Items}}{{if and .Spec.NATOutgoing (not .Labels.absent)}}{{.Name}}{{end}}{{end}}{{end}}"))
                .isEqualTo("blue");
        assertThat(run("{{range .}}{{joinAndTruncate .Items \",\" 10}}{{end}}")).hasSize(10).endsWith("...");
    }

    @Test
    void trimMarkersCommentsAndEmptyRanges() throws Exception {
        assertThat(run("{{range .}}\n  {{- range .Items}}\n    {{- .Name}}\n  {{- end}}\n{{- end}}\n")).isEqualTo("bluegreen\n");
        assertThat(run("a{{/* ignored */}}b")).isEqualTo("ab");
        assertThat(run("{{range .}}{{range .Spec}}x{{else}}nothing{{end}}{{end}}")).isEqualTo("nothing");
        assertThat(run("{{range .}}{{if .Missing}}yes{{else if .Kind}}{{.Kind}}{{end}}{{end}}")).isEqualTo("IPPoolList");
        assertThat(run("{{$n := \"x\"}}{{$n}}{{range .}}{{$}}{{end}}")).startsWith("x[map[apiVersion:");
    }

    @Test
    void aBadTemplateSaysWhereAndWhy() {
        assertThatThrownBy(() -> GoTemplate.parse("{{range .}}{{.Name}}")).hasMessage("template: get:1: unexpected EOF: {{range}} has no {{end}}");
        assertThatThrownBy(() -> GoTemplate.parse("line\n{{.Name")).hasMessage("template: get:2: unclosed action");
        assertThatThrownBy(() -> GoTemplate.parse("{{end}}")).hasMessage("template: get:1: unexpected {{end}}");
        assertThatThrownBy(() -> GoTemplate.parse("{{.Name | }}")).hasMessageContaining("missing command after |");
        assertThatThrownBy(() -> GoTemplate.parse("{{nosuch .Name}}").execute(pools()))
                .hasMessage("function \"nosuch\" not defined");
        assertThatThrownBy(() -> GoTemplate.parse("{{.Name \"x\"}}").execute(pools()))
                .hasMessageContaining("can't give argument to non-function .Name");
    }
}
