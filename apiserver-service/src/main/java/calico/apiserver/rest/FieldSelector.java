package calico.apiserver.rest;

import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.apiserver.errors.ApiException;
import java.util.ArrayList;
import java.util.List;

/** {@code fieldSelector} on {@code metadata.name} and {@code metadata.namespace} ({@code =}, {@code ==}, {@code !=}). */
public record FieldSelector(List<Term> terms) {

    record Term(String field, boolean equal, String value) {
    }

    public static FieldSelector parse(String s, ResourceKind kind) {
        List<Term> terms = new ArrayList<>();
        if (s == null || s.isBlank()) {
            return new FieldSelector(terms);
        }
        for (String part : s.split(",")) {
            String p = part.trim();
            int i;
            boolean equal;
            int opLen;
            if ((i = p.indexOf("!=")) > 0) {
                equal = false;
                opLen = 2;
            } else if ((i = p.indexOf("==")) > 0) {
                equal = true;
                opLen = 2;
            } else if ((i = p.indexOf('=')) > 0) {
                equal = true;
                opLen = 1;
            } else {
                throw ApiException.badRequest("invalid selector: '" + s + "'; can't understand '" + p + "'");
            }
            String field = p.substring(0, i).trim();
            if (!field.equals("metadata.name") && !field.equals("metadata.namespace")) {
                throw ApiException.badRequest("field label not supported: " + field);
            }
            terms.add(new Term(field, equal, p.substring(i + opLen).trim()));
        }
        return new FieldSelector(terms);
    }

    public boolean matches(Resource r) {
        for (Term t : terms) {
            String actual = t.field().equals("metadata.name") ? r.metadata().name() : r.metadata().namespace();
            boolean eq = t.value().equals(actual == null ? "" : actual);
            if (eq != t.equal()) {
                return false;
            }
        }
        return true;
    }
}
