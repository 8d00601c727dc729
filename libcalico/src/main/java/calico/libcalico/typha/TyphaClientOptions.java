package calico.libcalico.typha;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * How a {@link TyphaClient} connects.
 *
 * @param addresses      typha replicas as {@code host:port}; each reconnect moves to the next one
 * @param hostname       this node's name, sent in the hello
 * @param syncerType     the stream wanted
 * @param clientVersion  sent in the hello, informational
 * @param readTimeout    reconnect when nothing (not even a ping) arrived for this long
 *                       (Calico's {@code FELIX_TYPHAREADTIMEOUT}, 30 s)
 * @param initialBackoff first wait before reconnecting after a failure; doubles up to maxBackoff
 *                       and resets once a snapshot has been received
 * @param maxBackoff     cap on that wait
 * @param compression    ask for gzip-compressed messages
 * @param channels       opens a channel to one address (plaintext by default)
 * @param rediscovery    where to read the replicas again each time a reconnect has tried them all
 *                       (felix: the typha service's endpoints); {@code null} keeps {@code addresses}
 */
public record TyphaClientOptions(List<String> addresses, String hostname, SyncerType syncerType, String clientVersion,
                                 Duration readTimeout, Duration initialBackoff, Duration maxBackoff,
                                 boolean compression, Function<String, ManagedChannel> channels,
                                 Supplier<List<String>> rediscovery) {

    public TyphaClientOptions {
        addresses = checkedAddresses(addresses);
        if (hostname == null || hostname.isBlank()) {
            throw new IllegalArgumentException("hostname: required");
        }
        Objects.requireNonNull(syncerType, "syncerType");
        clientVersion = clientVersion == null ? "" : clientVersion;
        positive("readTimeout", readTimeout);
        positive("initialBackoff", initialBackoff);
        positive("maxBackoff", maxBackoff);
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff: must not be less than initialBackoff");
        }
        Objects.requireNonNull(channels, "channels");
    }

    private static void positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": must be positive, got " + d);
        }
    }

    /** {@return an immutable copy of {@code addresses}}, each checked to be {@code host:port}; never empty. */
    static List<String> checkedAddresses(List<String> addresses) {
        List<String> copy = List.copyOf(Objects.requireNonNull(addresses, "addresses"));
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("addresses: at least one typha address (host:port) is required");
        }
        copy.forEach(a -> checkHostPort("addresses", a));
        return copy;
    }

    /**
     * {@return the replicas of a {@code host:port}[,{@code host:port}…] setting} (blanks skipped),
     * as felix's and confd's …TYPHAADDR give them
     *
     * @throws IllegalArgumentException naming {@code setting} when one is not {@code host:port}
     */
    public static List<String> parseAddresses(String setting, String raw) {
        List<String> out = Arrays.stream(raw.split(",")).map(String::trim).filter(a -> !a.isEmpty()).toList();
        out.forEach(a -> checkHostPort(setting, a));
        return out;
    }

    private static void checkHostPort(String setting, String a) {
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new IllegalArgumentException(setting + ": \"" + a + "\" is not host:port");
        }
    }

    /**
     * Plaintext defaults: read timeout 30 s as Calico's felix; backoff 100 ms doubling up to 1 s, so a
     * client is back within about a second of typha however long it was away.
     */
    public static TyphaClientOptions plaintext(List<String> addresses, String hostname, SyncerType type) {
        return new TyphaClientOptions(addresses, hostname, type, "calico-java", Duration.ofSeconds(30),
                Duration.ofMillis(100), Duration.ofSeconds(1), false,
                a -> NettyChannelBuilder.forTarget(a).usePlaintext().build(), null);
    }

    public TyphaClientOptions withReadTimeout(Duration d) {
        return new TyphaClientOptions(addresses, hostname, syncerType, clientVersion, d, initialBackoff, maxBackoff,
                compression, channels, rediscovery);
    }

    public TyphaClientOptions withBackoff(Duration initial, Duration max) {
        return new TyphaClientOptions(addresses, hostname, syncerType, clientVersion, readTimeout, initial, max,
                compression, channels, rediscovery);
    }

    public TyphaClientOptions withCompression(boolean gzip) {
        return new TyphaClientOptions(addresses, hostname, syncerType, clientVersion, readTimeout, initialBackoff,
                maxBackoff, gzip, channels, rediscovery);
    }

    public TyphaClientOptions withChannels(Function<String, ManagedChannel> factory) {
        return new TyphaClientOptions(addresses, hostname, syncerType, clientVersion, readTimeout, initialBackoff,
                maxBackoff, compression, factory, rediscovery);
    }

    public TyphaClientOptions withRediscovery(Supplier<List<String>> source) {
        return new TyphaClientOptions(addresses, hostname, syncerType, clientVersion, readTimeout, initialBackoff,
                maxBackoff, compression, channels, source);
    }
}
