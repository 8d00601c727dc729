package calico.apiserver.auth;

import java.security.PublicKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Who is calling, in kube-apiserver's order: a front-proxy client certificate (signed by the
 * request-header CA, CN among the allowed names when any are set) lends its trust to the
 * {@code X-Remote-User}/{@code X-Remote-Group} headers; another client certificate signed by
 * the client CA is the user CN with groups O; otherwise a bearer token from the token file.
 * The TLS layer has already verified the chain against both CAs; here we only tell them apart.
 */
public final class Authenticator {

    private final List<X509Certificate> clientCas;
    private final List<X509Certificate> requestHeaderCas;
    private final List<String> allowedNames;
    private final List<String> userHeaders;
    private final List<String> groupHeaders;
    private final TokenFile tokens;

    public Authenticator(List<X509Certificate> clientCas, List<X509Certificate> requestHeaderCas,
                         List<String> allowedNames, List<String> userHeaders, List<String> groupHeaders,
                         TokenFile tokens) {
        this.clientCas = List.copyOf(clientCas);
        this.requestHeaderCas = List.copyOf(requestHeaderCas);
        this.allowedNames = List.copyOf(allowedNames);
        this.userHeaders = List.copyOf(userHeaders);
        this.groupHeaders = List.copyOf(groupHeaders);
        this.tokens = tokens;
    }

    public Optional<User> authenticate(HttpServletRequest req) {
        Object attr = req.getAttribute("jakarta.servlet.request.X509Certificate");
        if (attr instanceof X509Certificate[] chain && chain.length > 0) {
            X509Certificate leaf = chain[0];
            if (signedBy(leaf, requestHeaderCas)) {
                String cn = cn(leaf);
                if (allowedNames.isEmpty() || allowedNames.contains(cn)) {
                    for (String h : userHeaders) {
                        String user = req.getHeader(h);
                        if (user != null && !user.isEmpty()) {
                            List<String> groups = new ArrayList<>();
                            for (String gh : groupHeaders) {
                                Collections.list(req.getHeaders(gh)).forEach(groups::add);
                            }
                            return Optional.of(new User(user, "", groups));
                        }
                    }
                }
            }
            if (signedBy(leaf, clientCas)) {
                return Optional.of(new User(cn(leaf), "", organizations(leaf)));
            }
        }
        String auth = req.getHeader("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return tokens.user(auth.substring(7).trim());
        }
        return Optional.empty();
    }

    private static boolean signedBy(X509Certificate cert, List<X509Certificate> cas) {
        for (X509Certificate ca : cas) {
            try {
                if (!cert.getIssuerX500Principal().equals(ca.getSubjectX500Principal())) {
                    continue;
                }
                PublicKey key = ca.getPublicKey();
                cert.verify(key);
                cert.checkValidity();
                return true;
            } catch (Exception e) {
                // not this CA
            }
        }
        return false;
    }

    private static String cn(X509Certificate c) {
        return rdn(c, "CN").stream().findFirst().orElse("");
    }

    private static List<String> organizations(X509Certificate c) {
        return rdn(c, "O");
    }

    private static List<String> rdn(X509Certificate c, String type) {
        List<String> out = new ArrayList<>();
        try {
            for (Rdn r : new LdapName(c.getSubjectX500Principal().getName()).getRdns()) {
                if (r.getType().equalsIgnoreCase(type)) {
                    out.add(r.getValue().toString());
                }
            }
        } catch (Exception e) {
            // unreadable subject: no names
        }
        return out;
    }
}
