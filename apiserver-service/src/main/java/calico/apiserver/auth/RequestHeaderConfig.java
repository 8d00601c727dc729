package calico.apiserver.auth;

import java.security.cert.X509Certificate;
import java.util.List;

/**
 * Who may vouch for a user in request headers (the aggregation layer's front proxy), and in which
 * headers: from the {@code --requestheader-*} flags or from kube-apiserver's
 * {@code kube-system/extension-apiserver-authentication} ConfigMap.
 *
 * @param cas          CAs of the proxy's client certificate
 * @param allowedNames common names the proxy's certificate may have; empty: any the CAs signed
 * @param userHeaders  headers carrying the user name, first non-empty wins ({@code X-Remote-User})
 * @param uidHeaders   headers carrying the uid (none unless configured, as k8s 1.37)
 * @param groupHeaders headers carrying groups, every value of each ({@code X-Remote-Group})
 * @param extraPrefixes header prefixes of extra attributes ({@code X-Remote-Extra-}); the rest of
 *                      the name, lower-cased and %-unescaped, is the key
 */
public record RequestHeaderConfig(List<X509Certificate> cas, List<String> allowedNames, List<String> userHeaders,
                                  List<String> uidHeaders, List<String> groupHeaders, List<String> extraPrefixes) {
    public RequestHeaderConfig {
        cas = List.copyOf(cas);
        allowedNames = List.copyOf(allowedNames);
        userHeaders = List.copyOf(userHeaders);
        uidHeaders = List.copyOf(uidHeaders);
        groupHeaders = List.copyOf(groupHeaders);
        extraPrefixes = List.copyOf(extraPrefixes);
    }
}
