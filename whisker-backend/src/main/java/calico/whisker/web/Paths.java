package calico.whisker.web;

import jakarta.servlet.http.HttpServletRequest;
import java.util.regex.Pattern;

/** Which paths are the UI's public static files; everything else is API (authenticated, not cached). */
public final class Paths {

    private static final Pattern FAVICON = Pattern.compile("/favicon\\.[A-Za-z0-9]+");

    private Paths() {
    }

    public static String path(HttpServletRequest r) {
        String uri = r.getRequestURI();
        String ctx = r.getContextPath();
        return ctx != null && !ctx.isEmpty() && uri.startsWith(ctx) ? uri.substring(ctx.length()) : uri;
    }

    /** The page must load without credentials so that it can ask for them. */
    public static boolean isPublicStatic(String path) {
        return path.equals("/") || path.equals("/index.html") || path.startsWith("/assets/")
                || FAVICON.matcher(path).matches();
    }
}
