package calico.apiserver.rest;

import calico.apiserver.errors.ApiException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Kubernetes label selectors ({@code app=web,tier!=db,env in (a,b),!legacy}) translated into
 * the Calico selector the datastore filters with. Errors are 400s with kube-apiserver's wording.
 */
public final class LabelSelectors {

    private static final Pattern KEY = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");

    private LabelSelectors() {
    }

    /** {@return the Calico selector}, or null for "everything". */
    public static String toCalico(String k8s) {
        if (k8s == null || k8s.isBlank()) {
            return null;
        }
        List<String> terms = new ArrayList<>();
        for (String req : split(k8s)) {
            terms.add(term(req.trim(), k8s));
        }
        return String.join(" && ", terms);
    }

    private static List<String> split(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        out.add(s.substring(start));
        return out;
    }

    private static String term(String req, String whole) {
        if (req.isEmpty()) {
            throw bad(whole, "found '', expected: !, identifier, or 'end of string'");
        }
        if (req.startsWith("!")) {
            return "!has(" + key(req.substring(1).trim(), whole) + ")";
        }
        String[] ops = {"!=", "==", "="};
        for (String op : ops) {
            int i = req.indexOf(op);
            if (i > 0) {
                String k = key(req.substring(0, i).trim(), whole);
                String v = value(req.substring(i + op.length()).trim(), whole);
                return k + (op.equals("!=") ? " != " : " == ") + quote(v);
            }
        }
        var m = Pattern.compile("^(\\S+)\\s+(in|notin)\\s*\\((.*)\\)$").matcher(req);
        if (m.matches()) {
            String k = key(m.group(1), whole);
            List<String> vals = new ArrayList<>();
            for (String v : m.group(3).split(",")) {
                vals.add(quote(value(v.trim(), whole)));
            }
            return k + (m.group(2).equals("in") ? " in {" : " not in {") + String.join(", ", vals) + "}";
        }
        return "has(" + key(req, whole) + ")";
    }

    private static String key(String k, String whole) {
        if (!KEY.matcher(k).matches()) {
            throw bad(whole, "invalid label key \"" + k + "\"");
        }
        return k;
    }

    private static String value(String v, String whole) {
        if (!VALUE.matcher(v).matches() || v.length() > 63) {
            throw bad(whole, "invalid label value: \"" + v + "\"");
        }
        return v;
    }

    private static String quote(String v) {
        return "'" + v + "'";
    }

    private static ApiException bad(String whole, String why) {
        return ApiException.badRequest("unable to parse requirement: " + why);
    }
}
