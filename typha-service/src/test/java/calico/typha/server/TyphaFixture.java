package calico.typha.server;

import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.health.HealthAggregator;
import calico.libcalico.testing.Await;
import calico.libcalico.typha.SyncerType;
import calico.libcalico.typha.TyphaClient;
import calico.libcalico.typha.TyphaClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Helpers shared by the typha tests: servers, clients, waiting, the datastore's view. */
final class TyphaFixture {

    private TyphaFixture() {
    }

    static TyphaServer server(Datastore ds, ServerSettings settings) {
        return server(ds, settings, new SimpleMeterRegistry());
    }

    static TyphaServer server(Datastore ds, ServerSettings settings, SimpleMeterRegistry meters) {
        return server(ds, settings, meters, null);
    }

    /** @param interceptor wraps every call, as the TLS identity check does; null for none */
    static TyphaServer server(Datastore ds, ServerSettings settings, SimpleMeterRegistry meters,
                              io.grpc.ServerInterceptor interceptor) {
        TyphaServer s = new TyphaServer(ds, settings, null, meters, new HealthAggregator(Clock.systemUTC()), "test",
                interceptor);
        s.start();
        return s;
    }

    static TyphaClientOptions clientOptions(String host, int... ports) {
        List<String> addresses = java.util.Arrays.stream(ports).mapToObj(p -> "127.0.0.1:" + p).toList();
        return TyphaClientOptions.plaintext(addresses, host, SyncerType.FELIX)
                .withBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
                .withReadTimeout(Duration.ofSeconds(20));
    }

    static void await(String what, BooleanSupplier condition) {
        await(what, condition, Duration.ofSeconds(60), () -> "");
    }

    /** libcalico's {@link Await}, with {@code detail} (the state at the deadline) added to its failure. */
    static void await(String what, BooleanSupplier condition, Duration timeout, Supplier<String> detail) {
        try {
            Await.until(what, timeout, condition);
        } catch (AssertionError e) {
            String state = detail.get();
            throw state.isEmpty() ? e : new AssertionError(e.getMessage() + " " + state, e);
        }
    }

    /** {@return key → resourceVersion of every resource felix's syncer covers} */
    static Map<ResourceKey, String> datastoreVersions(Datastore ds) {
        Map<ResourceKey, String> out = new HashMap<>();
        for (ResourceKind k : SyncerType.FELIX.kindsOn(ds)) {
            for (Resource r : ds.list(k).items()) {
                out.put(r.key(), r.metadata().resourceVersion());
            }
        }
        return out;
    }

    static Map<ResourceKey, String> versions(Map<ResourceKey, Resource> view) {
        Map<ResourceKey, String> out = new HashMap<>();
        view.forEach((k, r) -> out.put(k, r.metadata().resourceVersion()));
        return out;
    }

    static void closeAll(List<? extends AutoCloseable> xs) {
        for (AutoCloseable x : xs) {
            try {
                x.close();
            } catch (Exception ignored) {
                // best effort in cleanup
            }
        }
    }

    static TyphaClient client(TyphaClientOptions o, ViewRecorder r) {
        TyphaClient c = new TyphaClient(o, r);
        c.start();
        return c;
    }
}
