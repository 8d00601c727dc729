package calico.node.startup.autodetect;

import calico.api.net.IpAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;

/** The node's network: its interfaces, and the routes that pick a source address. */
@FunctionalInterface
public interface HostInterfaces {

    /** {@return every interface with its addresses, by ascending index} */
    List<HostInterface> list();

    /**
     * {@return the source address the kernel picks to reach {@code destination}}, empty when there is
     * no route. A connected UDP socket sends nothing: the kernel only looks up the route (Calico's
     * {@code can-reach}). This default asks the calling thread's network namespace.
     */
    default Optional<IpAddress> sourceAddress(InetAddress destination) {
        try (DatagramSocket s = new DatagramSocket()) {
            try {
                s.connect(new InetSocketAddress(destination, 80));
            } catch (IOException | UncheckedIOException noRoute) {
                return Optional.empty();
            }
            InetAddress a = s.getLocalAddress();
            return a == null || a.isAnyLocalAddress() ? Optional.empty() : Optional.of(IpAddress.of(a.getAddress()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a UDP socket", e);
        }
    }
}
