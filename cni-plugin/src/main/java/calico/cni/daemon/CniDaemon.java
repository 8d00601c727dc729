package calico.cni.daemon;

import calico.cni.plugin.CalicoCni;
import calico.cni.config.NetConf;
import calico.cni.plugin.DatastoreCache;
import calico.cni.plugin.WorkloadNetwork;
import calico.cni.spec.CniError;
import calico.cni.spec.CniRequest;
import calico.cni.spec.CniResponse;
import calico.cni.spec.CniVersions;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import jnr.unixsocket.UnixServerSocketChannel;
import jnr.unixsocket.UnixSocketAddress;
import jnr.unixsocket.UnixSocketChannel;

/**
 * The node-local daemon: a warm JVM that runs {@link CalicoCni} for the thin client, so a call
 * costs a unix-socket round trip instead of a JVM start (see DESIGN.md for the figures).
 *
 * <p>Wire format, one call per connection. Request: the caller's environment as
 * {@code KEY=VALUE} entries each ended by a NUL byte, an empty entry (one more NUL), then the
 * network configuration until the client shuts its write side. Response: the exit status in
 * decimal and a newline, then stdout until the daemon closes the connection.
 *
 * <p>Also serves {@code GET /ipam/v1/usage} (Calico IPAM's pool and block usage as JSON) on
 * 127.0.0.1.
 */
public final class CniDaemon implements AutoCloseable {
    public static final String DEFAULT_SOCKET = "/var/run/calico/cni.sock";
    private static final int MAX_REQUEST = 4 << 20;

    private final Path socketPath;
    private final UnixServerSocketChannel server;
    private final CalicoCni cni;
    private final DatastoreCache datastores;
    private final ExecutorService workers = Executors.newFixedThreadPool(32, r -> {
        Thread t = new Thread(r, "cni-call");
        t.setDaemon(true);
        return t;
    });
    private final HttpServer http;
    private final Datastore usageDatastore;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final ObjectMapper json = new ObjectMapper();
    private final String hostname;
    /** CIDRs and addresses as Calico writes them ("10.0.0.0/26"), not as their record fields. */
    private final ObjectMapper usageJson = new ObjectMapper().registerModule(new SimpleModule()
            .addSerializer(Cidr.class, ToStringSerializer.instance)
            .addSerializer(IpAddress.class, ToStringSerializer.instance));

    private CniDaemon(Path socketPath, UnixServerSocketChannel server, int httpPort, String hostname,
                      Datastore usageDatastore, String hostNetns) throws IOException {
        this.socketPath = socketPath;
        this.hostname = hostname;
        this.server = server;
        this.datastores = new DatastoreCache();
        // Only the host-side netlink work enters hostNetns; datastore and Kubernetes API
        // connections stay in the daemon's namespace, where those servers listen.
        this.cni = new CalicoCni(json, hostname, datastores, new WorkloadNetwork(hostNetns));
        this.usageDatastore = usageDatastore;
        if (httpPort >= 0) {
            http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), httpPort), 16);
            http.createContext("/ipam/v1/usage", this::usage);
            http.setExecutor(workers);
            http.start();
        } else {
            http = null;
        }
        Thread acceptor = new Thread(this::acceptLoop, "cni-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Binds {@code socket} (replacing a stale file, mode 0600) and starts serving.
     *
     * @param httpPort       port of the usage endpoint on 127.0.0.1 (0 = any free one, -1 = none)
     * @param usageDatastore the datastore whose IPAM usage is served (null: the endpoint answers 503);
     *                       closed with the daemon
     */
    public static CniDaemon start(Path socket, int httpPort, String hostname, Datastore usageDatastore) throws IOException {
        return start(socket, httpPort, hostname, usageDatastore, null);
    }

    /**
     * As {@link #start(Path, int, String, Datastore)}, but every call runs inside the network
     * namespace {@code hostNetns} ({@code ip netns add} name): that namespace plays the node's
     * host side (the {@code cali…} veths, their routes and sysctls land there), while the
     * socket, the usage endpoint and the datastore connections stay in the daemon's own.
     *
     * @param hostNetns namespace name, or null/empty for the daemon's own namespace
     * @throws IllegalArgumentException naming CALICO_CNI_NETNS when the namespace does not exist
     */
    public static CniDaemon start(Path socket, int httpPort, String hostname, Datastore usageDatastore,
                                  String hostNetns) throws IOException {
        String netnsPath = null;
        if (hostNetns != null && !hostNetns.isBlank()) {
            if (!hostNetns.matches("[A-Za-z0-9_.-]+")) {
                throw new IllegalArgumentException("CALICO_CNI_NETNS: \"" + hostNetns + "\" is not a namespace name");
            }
            netnsPath = "/run/netns/" + hostNetns;
            if (!Files.exists(Path.of(netnsPath))) {
                throw new IllegalArgumentException("CALICO_CNI_NETNS: " + netnsPath + " does not exist (ip netns add " + hostNetns + ")");
            }
        }
        Files.createDirectories(socket.toAbsolutePath().getParent());
        Files.deleteIfExists(socket);
        UnixServerSocketChannel server = UnixServerSocketChannel.open();
        server.socket().bind(new UnixSocketAddress(socket.toFile()));
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        return new CniDaemon(socket, server, httpPort, hostname, usageDatastore, netnsPath);
    }

    /** {@return the HTTP port of the usage endpoint}, or -1 when it is off. */
    public int httpPort() {
        return http == null ? -1 : http.getAddress().getPort();
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                UnixSocketChannel ch = server.accept();
                if (ch != null) {
                    workers.execute(() -> serve(ch));
                }
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return;
                }
            }
        }
    }

    private void serve(UnixSocketChannel ch) {
        try (ch; InputStream in = Channels.newInputStream(ch); OutputStream out = Channels.newOutputStream(ch)) {
            CniResponse r;
            try {
                CniRequest request = read(in);
                r = cni.handle(request);
            } catch (CniError e) {
                r = new CniResponse(1, json.writeValueAsString(e.toJson(json, CniVersions.LATEST)));
            }
            out.write((r.exitCode() + "\n" + r.stdout()).getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            // the client went away: it has already reported its own failure
        }
    }

    static CniRequest read(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        int n;
        while ((n = in.read(chunk)) > 0) {
            buf.write(chunk, 0, n);
            if (buf.size() > MAX_REQUEST) {
                throw new CniError(CniError.IO_FAILURE, "request: larger than " + MAX_REQUEST + " bytes");
            }
        }
        byte[] all = buf.toByteArray();
        Map<String, String> env = new HashMap<>();
        int start = 0;
        for (int i = 0; i < all.length; i++) {
            if (all[i] == 0) {
                if (i == start) {
                    byte[] stdin = java.util.Arrays.copyOfRange(all, i + 1, all.length);
                    return new CniRequest(env, stdin);
                }
                String kv = new String(all, start, i - start, StandardCharsets.UTF_8);
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    env.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                start = i + 1;
            }
        }
        throw new CniError(CniError.DECODE_FAILURE, "request: the environment block is not terminated");
    }

    private void usage(HttpExchange ex) throws IOException {
        try (ex) {
            int status;
            byte[] body;
            if (!ex.getRequestMethod().equals("GET")) {
                status = 405;
                body = "{\"error\":\"method: only GET\"}".getBytes(StandardCharsets.UTF_8);
            } else if (usageDatastore == null) {
                status = 503;
                body = "{\"error\":\"datastore: set DATASTORE_TYPE/ETCD_ENDPOINTS for the daemon\"}".getBytes(StandardCharsets.UTF_8);
            } else {
                try {
                    body = usageJson.writeValueAsBytes(new IpamClient(usageDatastore, IpamOptions.defaults()).usage());
                    status = 200;
                } catch (RuntimeException e) {
                    status = 503;
                    body = json.writeValueAsBytes(Map.of("error", String.valueOf(e.getMessage())));
                }
            }
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, body.length);
            ex.getResponseBody().write(body);
        }
    }

    public void awaitClose() throws InterruptedException {
        closed.await();
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        if (http != null) {
            http.stop(0);
        }
        workers.shutdownNow();
        datastores.close();
        if (usageDatastore != null) {
            usageDatastore.close();
        }
        try {
            Files.deleteIfExists(socketPath);
        } catch (IOException ignored) {
            // a stale socket file is replaced on the next start
        }
        closed.countDown();
    }
}
