package calico.libcalico.typha;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Calico's peer check on a TLS certificate: the leaf must carry the expected common name or the
 * expected URI SAN (either suffices; at least one must be configured). Typha applies it to
 * felix's client certificate (TYPHA_CLIENTCN / TYPHA_CLIENTURISAN), felix to typha's
 * (FELIX_TYPHACN / FELIX_TYPHAURISAN).
 *
 * @param cn     expected subject CN, or empty
 * @param uriSan expected URI subject alternative name, or empty
 */
public record PeerIdentity(String cn, String uriSan) {

    public PeerIdentity {
        cn = cn == null ? "" : cn.trim();
        uriSan = uriSan == null ? "" : uriSan.trim();
        if (cn.isEmpty() && uriSan.isEmpty()) {
            throw new IllegalArgumentException("peer identity: a CN or a URI SAN is required");
        }
    }

    /** {@return null when {@code leaf} matches, else the reason it does not} */
    public String mismatch(X509Certificate leaf) {
        String leafCn = commonName(leaf);
        List<String> uris = uriSans(leaf);
        if (!cn.isEmpty() && cn.equals(leafCn)) {
            return null;
        }
        if (!uriSan.isEmpty() && uris.contains(uriSan)) {
            return null;
        }
        return "certificate with CN \"" + leafCn + "\" and URI SANs " + uris + " matches neither the expected CN \""
                + cn + "\" nor the expected URI SAN \"" + uriSan + "\"";
    }

    static String commonName(X509Certificate c) {
        try {
            for (Rdn rdn : new LdapName(c.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return String.valueOf(rdn.getValue());
                }
            }
        } catch (InvalidNameException e) {
            return "";
        }
        return "";
    }

    static List<String> uriSans(X509Certificate c) {
        List<String> out = new ArrayList<>();
        try {
            Collection<List<?>> sans = c.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (Integer.valueOf(6).equals(san.get(0))) {
                        out.add(String.valueOf(san.get(1)));
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // no readable SANs
        }
        return out;
    }
}
