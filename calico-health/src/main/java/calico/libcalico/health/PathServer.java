package calico.libcalico.health;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A {@link SideServer} serving the paths it is given: how a plain main (no Spring, no Actuator)
 * serves its probes ({@link HttpAnswers#probe}), its metrics ({@link HttpAnswers#prometheus}) and its
 * own endpoints. A path answers itself and everything below it (the JDK server's prefix match), as
 * the paths of {@link PrometheusMetricsServer} and {@link DebugProfileServer} do.
 */
public final class PathServer extends SideServer {

    private final Map<String, HttpHandler> paths;

    /**
     * @param host    address to listen on (empty: all)
     * @param port    port (0: any free one, see {@link #boundPort()})
     * @param setting the port setting as errors name it, e.g. {@code CONFD_HEALTHPORT}
     * @param paths   path → its handler
     */
    public PathServer(String host, int port, String setting, Map<String, HttpHandler> paths) {
        super(host, port, setting);
        this.paths = new LinkedHashMap<>(paths);
    }

    @Override
    void serve(HttpServer server) {
        paths.forEach(server::createContext);
    }
}
