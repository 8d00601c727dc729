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

    /** How both iperf3 processes are scheduled. */
    public enum Scheduling {
        /** The default time-sharing policy: the figures move with whatever else the machine runs. */
        NORMAL(List.of()),
        /**
         * {@code SCHED_FIFO} priority 10 for client and server alike: other processes' load can no
         * longer take their CPU (the kernel still leaves 5 % to others); softirq work deferred to
         * {@code ksoftirqd} and cache contention still count.
         */
        REALTIME(List.of("chrt", "-f", "10"));

        private final List<String> prefix;

        Scheduling(List<String> prefix) {
            this.prefix = prefix;
        }
    }

    private Iperf3() {
    }

    /** {@return Gbit/s an iperf3 server at {@code ip} in {@code server} received from a client in {@code client}} */
    public static double gbps(NetNs server, String ip, NetNs client, int seconds) {
        return gbps(server, ip, client, seconds, Scheduling.NORMAL);
    }

    /** As {@link #gbps(NetNs, String, NetNs, int)}, both processes scheduled as {@code scheduling} says. */
    public static double gbps(NetNs server, String ip, NetNs client, int seconds, Scheduling scheduling) {
        Process s;
        try {
            List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", server.name()));
            c.addAll(scheduled(scheduling, "-s", "-B", ip, "-p", Integer.toString(PORT)));
            s = new ProcessBuilder(c).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new UncheckedIOException("iperf3 server in " + server.name(), e);
        }
        try {
            Await.until("iperf3 server listening on " + ip, Duration.ofSeconds(10),
                    () -> server.exec("ss", "-Hltn", "sport = :" + PORT).contains(ip + ":" + PORT));
            String out = client.exec(scheduled(scheduling, "-c", ip, "-p", Integer.toString(PORT), "-t",
                    Integer.toString(seconds), "-J").toArray(String[]::new));
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

    /** {@return iperf3 with {@code args}, behind the scheduling's prefix} */
    private static List<String> scheduled(Scheduling scheduling, String... args) {
        List<String> c = new ArrayList<>(scheduling.prefix);
        c.add("iperf3");
        c.addAll(List.of(args));
        return c;
    }

    /** {@return the median of {@code values}} (the upper one of an even count) */
    public static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        return sorted.get(sorted.size() / 2);
    }
}
