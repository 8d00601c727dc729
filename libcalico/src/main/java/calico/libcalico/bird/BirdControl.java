package calico.libcalico.bird;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jnr.unixsocket.UnixSocketAddress;
import jnr.unixsocket.UnixSocketChannel;
import jnr.unixsocket.UnixSocketOptions;

/**
 * A client of BIRD's control socket (what {@code birdc} speaks): one connection per command,
 * a line-based protocol whose lines start with a 4-digit code, {@code -} when more lines
 * follow, a space on the last one, and a leading space on continuation lines. Thread-safe
 * (no shared connection). The one client of BIRD in the suite: confd (reload, peer monitor), the
 * CalicoNodeStatus reporter and {@code calicoctl node status} all use it.
 */
public final class BirdControl {

    private final Path socket;
    private final Duration timeout;

    public BirdControl(Path socket, Duration timeout) {
        this.socket = socket;
        this.timeout = timeout;
    }

    public Path socket() {
        return socket;
    }

    /** Sends one command and reads its whole reply. @throws IOException when BIRD is not there or does not answer */
    public BirdReply command(String command) throws IOException {
        if (command.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("a BIRD command is one line");
        }
        try (UnixSocketChannel ch = UnixSocketChannel.open(new UnixSocketAddress(socket.toFile()))) {
            ch.setOption(UnixSocketOptions.SO_RCVTIMEO, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch),
                    StandardCharsets.UTF_8));
            BirdReply hello = read(in);
            if (hello.finalCode() != 1) {
                throw new IOException("BIRD at " + socket + " did not greet: " + hello.text());
            }
            OutputStream out = Channels.newOutputStream(ch);
            out.write((command + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            return read(in);
        }
    }

    /** Asks BIRD to re-read its configuration file. @throws IOException with BIRD's message when it refuses */
    public BirdReply configure() throws IOException {
        BirdReply r = command("configure");
        if (r.error()) {
            throw new IOException("BIRD refused the configuration: " + r.text());
        }
        return r;
    }

    /** {@return every protocol with its state} (from {@code show protocols all}) */
    public List<BirdProtocol> protocols() throws IOException {
        return ProtocolsParser.parse(command("show protocols all"));
    }

    /** {@return BIRD's version, router id and boot/reconfiguration times} (from {@code show status}) */
    public BirdStatus status() throws IOException {
        return BirdStatus.parse(command("show status"));
    }

    /** {@return every route of every table with its next hop} (from {@code show route all}) */
    public List<BirdRoute> routes() throws IOException {
        return RoutesParser.parse(command("show route all"));
    }

    static BirdReply read(BufferedReader in) throws IOException {
        List<BirdReply.Line> lines = new ArrayList<>();
        int code = 0;
        while (true) {
            String l = in.readLine();
            if (l == null) {
                throw new IOException("BIRD closed the control connection mid-reply");
            }
            if (l.startsWith(" ")) {
                lines.add(new BirdReply.Line(code, l.substring(1)));
                continue;
            }
            if (l.length() < 5 || !Character.isDigit(l.charAt(0))) {
                throw new IOException("unexpected line from BIRD: " + l);
            }
            code = Integer.parseInt(l.substring(0, 4));
            lines.add(new BirdReply.Line(code, l.substring(5)));
            if (l.charAt(4) == ' ') {
                return new BirdReply(lines);
            }
        }
    }
}
