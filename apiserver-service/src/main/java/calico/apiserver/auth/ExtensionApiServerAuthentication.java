package calico.apiserver.auth;

import com.fasterxml.jackson.core.type.TypeReference;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-apiserver's {@code kube-system/extension-apiserver-authentication} ConfigMap, which an
 * aggregated API server reads for what its flags leave out: {@code client-ca-file} (the cluster's
 * client CA) and {@code requestheader-client-ca-file}, {@code requestheader-allowed-names},
 * {@code requestheader-username-headers}, {@code requestheader-uid-headers},
 * {@code requestheader-group-headers}, {@code requestheader-extra-headers-prefix} (JSON string
 * arrays). Read once at start (a failure stops the start unless tolerated), then watched, so a
 * rotated CA applies without a restart. A deleted ConfigMap trusts nothing, as k8s.
 */
final class ExtensionApiServerAuthentication implements AutoCloseable {

    static final String NAMESPACE = "kube-system";
    static final String NAME = "extension-apiserver-authentication";

    private static final Logger LOG = LoggerFactory.getLogger(ExtensionApiServerAuthentication.class);

    /** What the ConfigMap says; empty parts where its keys are missing. */
    record Contents(List<X509Certificate> clientCas, Optional<RequestHeaderConfig> requestHeader) {
        static final Contents NONE = new Contents(List.of(), Optional.empty());
    }

    private final AtomicReference<Contents> current = new AtomicReference<>(Contents.NONE);
    private final SharedIndexInformer<ConfigMap> informer;

    private ExtensionApiServerAuthentication(KubernetesClient client, boolean tolerateFailure) {
        try {
            ConfigMap cm = client.configMaps().inNamespace(NAMESPACE).withName(NAME).get();
            if (cm == null) {
                throw new IllegalStateException("configmap " + NAMESPACE + "/" + NAME + " not found");
            }
            current.set(parse(cm));
        } catch (RuntimeException e) {
            String msg = "unable to load configmap " + NAMESPACE + "/" + NAME + " (--authentication-kubeconfig): "
                    + e.getMessage();
            if (!tolerateFailure) {
                throw new IllegalStateException(msg + "; --authentication-tolerate-lookup-failure=true starts anyway", e);
            }
            LOG.warn("{}; continuing without it (--authentication-tolerate-lookup-failure)", msg);
        }
        this.informer = client.configMaps().inNamespace(NAMESPACE).withName(NAME).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap cm) {
                update(cm);
            }

            @Override
            public void onUpdate(ConfigMap old, ConfigMap cm) {
                update(cm);
            }

            @Override
            public void onDelete(ConfigMap cm, boolean unknownFinalState) {
                LOG.warn("configmap {}/{} deleted: trusting no client certificate it named", NAMESPACE, NAME);
                current.set(Contents.NONE);
            }
        }, 0);
    }

    static ExtensionApiServerAuthentication start(KubernetesClient client, boolean tolerateFailure) {
        return new ExtensionApiServerAuthentication(client, tolerateFailure);
    }

    List<X509Certificate> clientCas() {
        return current.get().clientCas();
    }

    Optional<RequestHeaderConfig> requestHeader() {
        return current.get().requestHeader();
    }

    private void update(ConfigMap cm) {
        try {
            current.set(parse(cm));
        } catch (RuntimeException e) {
            // Keep what we had: a half-written ConfigMap must not lock every client out.
            LOG.warn("configmap {}/{}: {}; keeping the previous contents", NAMESPACE, NAME, e.getMessage());
        }
    }

    /** {@return the ConfigMap's authentication settings}; a bad key fails naming it. */
    static Contents parse(ConfigMap cm) {
        Map<String, String> data = cm.getData() == null ? Map.of() : cm.getData();
        String where = "configmap " + NAMESPACE + "/" + NAME + " key ";
        List<X509Certificate> clientCas = blank(data.get("client-ca-file")) ? List.of()
                : Pem.certificates(where + "client-ca-file", data.get("client-ca-file"));
        Optional<RequestHeaderConfig> requestHeader = Optional.empty();
        if (!blank(data.get("requestheader-client-ca-file"))) {
            requestHeader = Optional.of(new RequestHeaderConfig(
                    Pem.certificates(where + "requestheader-client-ca-file", data.get("requestheader-client-ca-file")),
                    strings(data, where, "requestheader-allowed-names"),
                    strings(data, where, "requestheader-username-headers"),
                    strings(data, where, "requestheader-uid-headers"),
                    strings(data, where, "requestheader-group-headers"),
                    strings(data, where, "requestheader-extra-headers-prefix")));
        }
        return new Contents(clientCas, requestHeader);
    }

    private static List<String> strings(Map<String, String> data, String where, String key) {
        String raw = data.get(key);
        if (blank(raw)) {
            return List.of();
        }
        try {
            return List.copyOf(DelegatedApi.JSON.readValue(raw, new TypeReference<List<String>>() { }));
        } catch (Exception e) {
            throw new IllegalArgumentException(where + key + ": not a JSON array of strings: " + raw, e);
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    @Override
    public void close() {
        informer.close();
    }
}
