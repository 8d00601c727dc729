package calico.whisker.web;

import jakarta.servlet.http.HttpServletRequest;

/** Which paths are the UI's public static files; everything else is API (authenticated, not cached). */
public final class Paths {

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
                || path.matches("/favicon\\.[A-Za-z0-9]+");
    }
}
