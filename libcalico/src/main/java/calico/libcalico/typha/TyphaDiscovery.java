package calico.libcalico.typha;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * {@code …TYPHAK8SSERVICENAME}: typha's addresses from the EndpointSlices of its Kubernetes
 * service ({@code …TYPHAK8SNAMESPACE}), as Calico's felix and confd find them: only ready
 * endpoints, the port named {@code calico-typha}, typhas on this node first, and each group (this
 * node, the others) in a random order so that clients spread over the replicas. No zone
 * preference (Calico has none). Felix and confd share it; {@code setting} names the variable in
 * errors.
 */
public final class TyphaDiscovery {

    /** The service port that is typha's, as in Calico's manifests. */
    public static final String PORT_NAME = "calico-typha";
    /** The label Kubernetes puts on every EndpointSlice of a service. */
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

    private final KubernetesClient client;
    private final String namespace;
    private final String service;
    private final String nodeName;
    private final Random random;
    private final String setting;

    /**
     * @param setting the setting that asked for discovery, for errors, e.g.
     *                {@code felix.typha-k8s-service-name (FELIX_TYPHAK8SSERVICENAME)}
     */
    public TyphaDiscovery(KubernetesClient client, String namespace, String service, String nodeName, Random random,
                          String setting) {
        this.client = Objects.requireNonNull(client, "client");
        this.setting = setting;
        this.namespace = namespace;
        this.service = service;
        this.nodeName = nodeName;
        this.random = random;
    }

    /** {@return the service, as the settings name it} */
    public String describe() {
        return namespace + "/" + service;
    }

    /**
     * {@return host:port of every ready typha, this node's first, each group shuffled}
     *
     * @throws IllegalStateException naming the service when it has no ready typha endpoint
     */
    public List<String> addresses() {
        List<String> local = new ArrayList<>();
        List<String> remote = new ArrayList<>();
        for (ReadyEndpoint e : readyEndpoints(client, namespace, service, PORT_NAME)) {
            (nodeName != null && nodeName.equals(e.nodeName()) ? local : remote).add(e.address());
        }
        if (local.isEmpty() && remote.isEmpty()) {
            throw new IllegalStateException(setting + ": service " + describe() + " has no ready endpoint on a port named " + PORT_NAME);
        }
        Collections.shuffle(local, random);
        Collections.shuffle(remote, random);
        List<String> out = new ArrayList<>(local);
        out.addAll(remote);
        return out;
    }

    /**
     * Reads the addresses until there is at least one, waiting {@code initial} then doubling up to
     * {@code max} between attempts and telling {@code onMiss} why each attempt found none.
     * {@return them}, or {@code null} once {@code running} turns false or the thread is interrupted
     */
    public List<String> await(BooleanSupplier running, Duration initial, Duration max, Consumer<String> onMiss) {
        Duration wait = initial;
        while (running.getAsBoolean()) {
            try {
                return addresses();
            } catch (RuntimeException e) {
                onMiss.accept(e.getMessage());
            }
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            wait = wait.multipliedBy(2).compareTo(max) > 0 ? max : wait.multipliedBy(2);
        }
        return null;
    }

    /** One ready endpoint of a service: {@code host:port} (IPv6 in brackets) and the node it runs on. */
    public record ReadyEndpoint(String address, String nodeName) {
    }

    /**
     * {@return each ready endpoint address of {@code service}'s EndpointSlices serving the port
     * named {@code portName}, once} (a missing {@code ready} condition counts as ready, as
     * Kubernetes documents it); typha counts its replicas with it too
     */
    public static List<ReadyEndpoint> readyEndpoints(KubernetesClient client, String namespace, String service,
                                                     String portName) {
        Set<String> seen = new LinkedHashSet<>();
        List<ReadyEndpoint> out = new ArrayList<>();
        List<EndpointSlice> slices = client.discovery().v1().endpointSlices().inNamespace(namespace)
                .withLabel(SERVICE_NAME_LABEL, service).list().getItems();
        for (EndpointSlice slice : slices) {
            Integer port = null;
            for (EndpointPort p : nullSafe(slice.getPorts())) {
                if (portName.equals(p.getName()) && p.getPort() != null) {
                    port = p.getPort();
                }
            }
            if (port == null) {
                continue;
            }
            for (Endpoint e : nullSafe(slice.getEndpoints())) {
                if (e.getConditions() != null && Boolean.FALSE.equals(e.getConditions().getReady())) {
                    continue;
                }
                for (String ip : nullSafe(e.getAddresses())) {
                    String address = (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
                    if (seen.add(address)) {
                        out.add(new ReadyEndpoint(address, e.getNodeName()));
                    }
                }
            }
        }
        return out;
    }

    private static <T> List<T> nullSafe(List<T> xs) {
        return xs == null ? List.of() : xs;
    }
}
