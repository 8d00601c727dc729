package calico.dataplane.netfilter;

import calico.dataplane.testing.NetNs;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A TCP server that reads a request to its end and answers with a fixed number of bytes, and
 * the client for it: real connections with known byte counts in each direction.
 */
final class TcpExchange implements AutoCloseable {
    private final ServerSocket server;

    private TcpExchange(ServerSocket server, int answerBytes) {
        this.server = server;
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    while (in.read(new byte[4096]) >= 0) {
                        // drain the request
                    }
                    s.getOutputStream().write(new byte[answerBytes]);
                } catch (IOException e) {
                    // closed, or the client went away: next
                }
            }
        }, "tcp-exchange-" + server.getLocalPort());
        t.setDaemon(true);
        t.start();
    }

    /** A server on {@code ip:port} in {@code ns}, answering each request with {@code answerBytes}. */
    static TcpExchange serve(NetNs ns, String ip, int port, int answerBytes) {
        return new TcpExchange(ns.call(() -> new ServerSocket(port, 50, InetAddress.getByName(ip))), answerBytes);
    }

    /** Sends {@code requestBytes} from {@code ns} to {@code ip:port}, reads the answer, closes; {@return the client's port}. */
    static int exchange(NetNs ns, String ip, int port, int requestBytes) {
        return ns.call(() -> {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(ip, port), 5000);
                s.setSoTimeout(5000);
                s.getOutputStream().write(new byte[requestBytes]);
                s.shutdownOutput();
                s.getInputStream().readAllBytes();
                return s.getLocalPort();
            }
        });
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
