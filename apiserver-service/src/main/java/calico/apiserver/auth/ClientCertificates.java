package calico.apiserver.auth;

import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Verifies a client's certificate chain against a set of CAs, as k8s.io/apiserver's x509
 * authenticator does: the TLS layer only asks for a certificate (and proves the client holds its
 * key, see {@code AnyClientCertificate}); trust is decided here, against CAs that may change
 * while the server runs (the {@code extension-apiserver-authentication} ConfigMap). The chain may
 * carry intermediates; the leaf must be valid now and, when it names usages, usable for client
 * authentication.
 */
final class ClientCertificates {

    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final String ANY_USAGE = "2.5.29.37.0";

    private ClientCertificates() {
    }

    /** {@return whether {@code chain} (leaf first) leads to one of {@code cas}}. */
    static boolean verify(X509Certificate[] chain, List<X509Certificate> cas, Instant now) {
        if (chain == null || chain.length == 0 || cas.isEmpty()) {
            return false;
        }
        try {
            List<String> usages = chain[0].getExtendedKeyUsage();
            if (usages != null && !usages.contains(CLIENT_AUTH) && !usages.contains(ANY_USAGE)) {
                return false;
            }
            Set<TrustAnchor> anchors = new HashSet<>();
            cas.forEach(ca -> anchors.add(new TrustAnchor(ca, null)));
            // The path stops below the anchor: a client may send its CA along, which PKIX must not see.
            List<X509Certificate> path = new ArrayList<>();
            for (X509Certificate c : chain) {
                if (!cas.contains(c)) {
                    path.add(c);
                }
            }
            if (path.isEmpty()) {
                return false;
            }
            PKIXParameters params = new PKIXParameters(anchors);
            params.setRevocationEnabled(false);
            params.setDate(Date.from(now));
            CertPathValidator.getInstance("PKIX")
                    .validate(CertificateFactory.getInstance("X.509").generateCertPath(path), params);
            return true;
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }

    static String commonName(X509Certificate c) {
        return rdn(c, "CN").stream().findFirst().orElse("");
    }

    static List<String> organizations(X509Certificate c) {
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
        } catch (InvalidNameException e) {
            // unreadable subject: no names
        }
        return out;
    }
}
