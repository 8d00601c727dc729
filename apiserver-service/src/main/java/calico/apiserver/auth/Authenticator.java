package calico.apiserver.auth;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Who is calling, in k8s.io/apiserver's delegated order: a front-proxy client certificate
 * (signed by the request-header CA, CN among the allowed names when any are set) lends its trust
 * to the user, uid, group and extra headers; another client certificate signed by the client CA
 * is the user CN with groups O; otherwise a bearer token, from the token file or a TokenReview.
 * The TLS layer only requests the certificate; the chains are verified here, against the CAs of
 * the flags or of the cluster's {@code extension-apiserver-authentication} ConfigMap as they are
 * now. There is no anonymous user: a request none of these recognises is 401 (see DESIGN.md).
 */
public final class Authenticator implements AutoCloseable {

    private final Supplier<List<X509Certificate>> clientCas;
    private final Supplier<Optional<RequestHeaderConfig>> requestHeader;
    private final List<TokenAuthenticator> tokens;
    private final List<AutoCloseable> resources;
    private final Clock clock;

    Authenticator(Supplier<List<X509Certificate>> clientCas, Supplier<Optional<RequestHeaderConfig>> requestHeader,
                  List<TokenAuthenticator> tokens, List<AutoCloseable> resources, Clock clock) {
        this.clientCas = clientCas;
        this.requestHeader = requestHeader;
        this.tokens = List.copyOf(tokens);
        this.resources = List.copyOf(resources);
        this.clock = clock;
    }

    /**
     * {@return the authenticator the settings describe}; with a kubeconfig it reads the cluster's
     * authentication ConfigMap now (failing the start unless tolerated) and keeps watching it.
     */
    public static Authenticator open(AuthenticationSettings s, MeterRegistry metrics) {
        List<TokenAuthenticator> tokens = new ArrayList<>(List.of(s.tokenFile()));
        List<AutoCloseable> resources = new ArrayList<>();
        Supplier<List<X509Certificate>> clientCas = s::clientCas;
        Supplier<Optional<RequestHeaderConfig>> requestHeader = s::requestHeader;
        if (s.kubeconfig() != null) {
            TokenReviews reviews = TokenReviews.open(s.kubeconfig(), s.tokenCacheTtl(), metrics);
            resources.add(reviews);
            tokens.add(reviews);
            if (s.looksUp()) {
                try {
                    ExtensionApiServerAuthentication cluster =
                            ExtensionApiServerAuthentication.start(reviews.client(), s.tolerateLookupFailure());
                    resources.add(0, cluster);
                    if (s.clientCas().isEmpty()) {
                        clientCas = cluster::clientCas;
                    }
                    if (s.requestHeader().isEmpty()) {
                        requestHeader = cluster::requestHeader;
                    }
                } catch (RuntimeException e) {
                    reviews.close();
                    throw e;
                }
            }
        }
        return new Authenticator(clientCas, requestHeader, tokens, resources, Clock.systemUTC());
    }

    public Optional<User> authenticate(HttpServletRequest req) {
        Object attr = req.getAttribute("jakarta.servlet.request.X509Certificate");
        if (attr instanceof X509Certificate[] chain && chain.length > 0) {
            Optional<RequestHeaderConfig> proxy = requestHeader.get();
            if (proxy.isPresent() && fromProxy(chain, proxy.get())) {
                Optional<User> vouched = headerUser(req, proxy.get());
                if (vouched.isPresent()) {
                    return vouched;
                }
            }
            if (ClientCertificates.verify(chain, clientCas.get(), clock.instant())) {
                return Optional.of(new User(ClientCertificates.commonName(chain[0]), "",
                        ClientCertificates.organizations(chain[0])));
            }
        }
        String auth = req.getHeader("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            String token = auth.substring(7).trim();
            for (TokenAuthenticator t : tokens) {
                Optional<User> u = t.user(token);
                if (u.isPresent()) {
                    return u;
                }
            }
        }
        return Optional.empty();
    }

    private boolean fromProxy(X509Certificate[] chain, RequestHeaderConfig proxy) {
        return ClientCertificates.verify(chain, proxy.cas(), clock.instant())
                && (proxy.allowedNames().isEmpty()
                || proxy.allowedNames().contains(ClientCertificates.commonName(chain[0])));
    }

    private static Optional<User> headerUser(HttpServletRequest req, RequestHeaderConfig proxy) {
        String name = first(req, proxy.userHeaders());
        if (name.isEmpty()) {
            return Optional.empty();
        }
        List<String> groups = new ArrayList<>();
        for (String h : proxy.groupHeaders()) {
            Collections.list(req.getHeaders(h)).forEach(groups::add);
        }
        Map<String, List<String>> extra = new LinkedHashMap<>();
        for (String header : Collections.list(req.getHeaderNames())) {
            for (String prefix : proxy.extraPrefixes()) {
                if (header.regionMatches(true, 0, prefix, 0, prefix.length()) && header.length() > prefix.length()) {
                    String key = URLDecoder.decode(header.substring(prefix.length()).replace("+", "%2B"),
                            StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
                    Collections.list(req.getHeaders(header))
                            .forEach(v -> extra.computeIfAbsent(key, k -> new ArrayList<>()).add(v));
                }
            }
        }
        return Optional.of(new User(name, first(req, proxy.uidHeaders()), groups, extra));
    }

    private static String first(HttpServletRequest req, List<String> headers) {
        for (String h : headers) {
            String v = req.getHeader(h);
            if (v != null && !v.isEmpty()) {
                return v;
            }
        }
        return "";
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable r : resources) {
            r.close();
        }
    }
}
