package calico.libcalico.datastore.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * The requests a fabric8 client sends, recorded as {@code "GET /api/v1/...?query"}, and an
 * optional action run (on the client's thread, before the request leaves) the first time a
 * request matches: how a test does something between two pages of a list.
 */
final class RequestLog implements Interceptor {

    private final List<String> requests = new CopyOnWriteArrayList<>();
    private volatile Predicate<String> trigger = r -> false;
    private volatile Runnable action = () -> { };

    /** {@return a client over {@code config} whose requests this log records}; the caller closes it. */
    KubernetesClient client(Config config) {
        return new KubernetesClientBuilder().withConfig(config)
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("request-log", this)).build();
    }

    /** Runs {@code then} once, before the first request that {@code when} matches. */
    void once(Predicate<String> when, Runnable then) {
        action = then;
        trigger = when;
    }

    /** {@return the requests recorded so far whose text contains every one of {@code parts}} */
    List<String> matching(String... parts) {
        return requests.stream().filter(r -> List.of(parts).stream().allMatch(r::contains)).toList();
    }

    void clear() {
        requests.clear();
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        String line = request.method() + " " + request.uri().getRawPath()
                + (request.uri().getRawQuery() == null ? "" : "?" + request.uri().getRawQuery());
        if (trigger.test(line)) {
            trigger = r -> false;
            action.run();
        }
        requests.add(line);
    }
}
