package calico.whisker.web;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/** The headers API.md asks for on every response; set before anything else runs so errors carry them too. */
public final class SecurityHeadersFilter extends OncePerRequestFilter {

    static final String CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            + "object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

    @Override
    protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        apply(res, Paths.isPublicStatic(Paths.path(req)), req.isSecure());
        chain.doFilter(req, res);
    }

    static void apply(HttpServletResponse res, boolean publicStatic, boolean secure) {
        res.setHeader("Content-Security-Policy", CSP);
        res.setHeader("X-Content-Type-Options", "nosniff");
        res.setHeader("X-Frame-Options", "DENY");
        res.setHeader("Referrer-Policy", "no-referrer");
        res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
        res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
        if (!publicStatic) {
            res.setHeader("Cache-Control", "no-store");
        }
        if (secure) {
            res.setHeader("Strict-Transport-Security", "max-age=31536000");
        }
    }

    /** Error dispatches are separate requests for Tomcat: give them the headers as well. */
    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return false;
    }
}
