package calico.whisker.auth;

import calico.whisker.web.ErrorBody;
import calico.whisker.web.Json;
import calico.whisker.web.Paths;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.springframework.web.filter.OncePerRequestFilter;

/** Authenticates every request except the UI's static files, before any handler (so before any goldmane call). */
public final class AuthFilter extends OncePerRequestFilter {

    private final Authenticator authenticator;

    public AuthFilter(Authenticator authenticator) {
        this.authenticator = authenticator;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        if (Paths.isPublicStatic(Paths.path(req))) {
            chain.doFilter(req, res);
            return;
        }
        String why = authenticator.reject(req.getHeader("Authorization"));
        if (why == null) {
            chain.doFilter(req, res);
            return;
        }
        res.setStatus(401);
        res.setHeader("WWW-Authenticate", authenticator.challenge());
        res.setContentType("application/json");
        res.getOutputStream().write(Json.write(ErrorBody.of(401, why, null)).getBytes(StandardCharsets.UTF_8));
    }
}
