package calico.felix.testing;

import calico.dataplane.testing.NetNs;
import calico.libcalico.testing.Await;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Debian's iperf3 between two network namespaces, for the throughput benchmarks: one TCP stream,
 * the server bound to one address, the figure the server received.
 */
public final class Iperf3 {

    private static final int PORT = 5201;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Iperf3() {
    }

    /** {@return Gbit/s an iperf3 server at {@code ip} in {@code server} received from a client in {@code client}} */
    public static double gbps(NetNs server, String ip, NetNs client, int seconds) {
        Process s;
        try {
            s = new ProcessBuilder("ip", "netns", "exec", server.name(), "iperf3", "-s", "-B", ip, "-p",
                    Integer.toString(PORT)).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("iperf3 server in " + server.name(), e);
        }
        try {
            Await.until("iperf3 server listening on " + ip, Duration.ofSeconds(10),
                    () -> server.exec("ss", "-Hltn", "sport = :" + PORT).contains(ip + ":" + PORT));
            String out = client.exec("iperf3", "-c", ip, "-p", Integer.toString(PORT), "-t", Integer.toString(seconds),
                    "-J");
            return JSON.readTree(out).path("end").path("sum_received").path("bits_per_second").asDouble() / 1e9;
        } catch (IOException e) {
            throw new UncheckedIOException("iperf3 output from " + client.name(), e);
        } finally {
            s.destroy();
            try {
                s.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@return the median of {@code values}} (the upper one of an even count) */
    public static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }
}
