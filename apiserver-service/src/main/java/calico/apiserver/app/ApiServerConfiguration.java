package calico.apiserver.app;

import calico.apiserver.auth.AuthenticationSettings;
import calico.apiserver.auth.Authenticator;
import calico.apiserver.auth.Authorizer;
import calico.apiserver.auth.Pem;
import calico.apiserver.auth.RbacRules;
import calico.apiserver.auth.RequestHeaderConfig;
import calico.apiserver.auth.SubjectAccessReviews;
import calico.apiserver.auth.TokenFile;
import calico.apiserver.http.ApiServlet;
import calico.apiserver.openapi.OpenApi;
import calico.apiserver.rest.ObjectCodec;
import calico.apiserver.rest.ResourceHandler;
import calico.apiserver.watch.WatchStreamer;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.datastore.config.DatastoreProperties;
import calico.libcalico.datastore.memory.MemoryDatastore;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/** Wires the API server: datastore, handlers, authentication, authorization, the servlet and TLS. */
@Configuration(proxyBeanMethods = false)
public class ApiServerConfiguration {

    /** Bookmarks of the memory datastore: its clients (ApiServerDatastore watches) learn progress from them. */
    static final Duration MEMORY_BOOKMARK_INTERVAL = Duration.ofSeconds(2);

    /**
     * The API server's names for the shared datastore settings: {@code apiserver.*} from Calico's
     * generic variables. Not {@code apiserver}: that backend is a client of this server, which must
     * hold the store itself.
     */
    static final DatastoreProperties.Source DATASTORE = new DatastoreProperties.Source("apiserver", "",
            java.util.Set.of(DatastoreConfig.Type.ETCDV3, DatastoreConfig.Type.KUBERNETES, DatastoreConfig.Type.MEMORY));

    /** The datastore this server holds; checked at start-up. */
    @Bean
    DatastoreProperties apiserverDatastore(Environment environment) {
        return DatastoreProperties.bind(environment, DATASTORE);
    }

    @Bean(destroyMethod = "close")
    Datastore datastore(DatastoreProperties datastore) {
        DatastoreConfig config = datastore.toConfig();
        if (config.type() == DatastoreConfig.Type.MEMORY) {
            // Without periodic bookmarks a watch on a quiet kind never learns it is live (etcd sends progress).
            return new MemoryDatastore(MemoryDatastore.Settings.defaults().withBookmarkInterval(MEMORY_BOOKMARK_INTERVAL));
        }
        return config.open();
    }

    @Bean
    ObjectCodec objectCodec() {
        return new ObjectCodec();
    }

    @Bean
    ResourceHandler resourceHandler(Datastore datastore, ObjectCodec codec) {
        return new ResourceHandler(datastore, codec);
    }

    @Bean
    WatchStreamer watchStreamer(Datastore datastore, ObjectCodec codec) {
        return new WatchStreamer(datastore, codec);
    }

    @Bean
    OpenApi openApi() {
        return new OpenApi();
    }

    @Bean(destroyMethod = "close")
    Authenticator authenticator(ApiServerProperties props, MeterRegistry metrics) {
        TokenFile tokens = ApiServerProperties.blank(props.tokenAuthFile()) ? TokenFile.empty()
                : TokenFile.read(Path.of(props.tokenAuthFile()));
        Optional<RequestHeaderConfig> requestHeader = ApiServerProperties.blank(props.requestheaderClientCaFile())
                ? Optional.empty()
                : Optional.of(new RequestHeaderConfig(
                        Pem.read("--requestheader-client-ca-file", props.requestheaderClientCaFile()),
                        props.requestheaderAllowedNames(), props.requestheaderUsernameHeaders(),
                        props.requestheaderUidHeaders(), props.requestheaderGroupHeaders(),
                        props.requestheaderExtraHeadersPrefix()));
        return Authenticator.open(new AuthenticationSettings(Pem.read("--client-ca-file", props.clientCaFile()),
                requestHeader, tokens, blankOrPath(props.authenticationKubeconfig()),
                props.authenticationTokenWebhookCacheTtl(), props.authenticationSkipLookup(),
                props.authenticationTolerateLookupFailure()), metrics);
    }

    @Bean(destroyMethod = "close")
    Authorizer authorizer(ApiServerProperties props, MeterRegistry metrics) {
        if (!ApiServerProperties.blank(props.authorizationKubeconfig())) {
            return new Authorizer(SubjectAccessReviews.open(Path.of(props.authorizationKubeconfig()),
                    props.authorizationWebhookCacheAuthorizedTtl(), props.authorizationWebhookCacheUnauthorizedTtl(),
                    metrics));
        }
        return new Authorizer(ApiServerProperties.blank(props.authorizationRulesFile()) ? RbacRules.none()
                : RbacRules.read(Path.of(props.authorizationRulesFile())));
    }

    private static Path blankOrPath(String file) {
        return ApiServerProperties.blank(file) ? null : Path.of(file);
    }

    @Bean
    ServletRegistrationBean<ApiServlet> apiServlet(ResourceHandler handler, WatchStreamer watches,
                                                   Authenticator authenticator, Authorizer authorizer, OpenApi openApi,
                                                   MeterRegistry metrics, ApiServerProperties props) {
        ServletRegistrationBean<ApiServlet> bean = new ServletRegistrationBean<>(new ApiServlet(handler, watches,
                authenticator, authorizer, openApi, metrics, props.maxRequestBodyBytes()), "/*");
        bean.setName("calicoApi");
        bean.setLoadOnStartup(1);
        return bean;
    }

    /**
     * HTTPS on --secure-port with the given pair or a self-signed one in --cert-dir. Client
     * certificates are requested, not required, and taken by the TLS layer whatever their issuer
     * ({@link AnyClientCertificate}): the {@link Authenticator} verifies them against the CAs of the moment.
     */
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> tls(ApiServerProperties props) {
        return factory -> {
            String cert = props.tlsCertFile();
            String key = props.tlsPrivateKeyFile();
            if (ApiServerProperties.blank(cert)) {
                Path[] pair = ServingCertificates.selfSigned(certDir(props));
                cert = pair[0].toString();
                key = pair[1].toString();
            }
            Ssl ssl = new Ssl();
            ssl.setEnabled(true);
            ssl.setCertificate("file:" + cert);
            ssl.setCertificatePrivateKey("file:" + key);
            ssl.setClientAuth(Ssl.ClientAuth.WANT);
            factory.setSsl(ssl);
            // Runs after Spring Boot configured the connector's SSL from the Ssl above.
            factory.addConnectorCustomizers(connector -> {
                for (SSLHostConfig host : connector.findSslHostConfigs()) {
                    host.setTrustManagerClassName(AnyClientCertificate.class.getName());
                }
            });
        };
    }

    private static Path certDir(ApiServerProperties props) {
        if (!ApiServerProperties.blank(props.certDir())) {
            return Path.of(props.certDir());
        }
        try {
            Path dir = Files.createTempDirectory("calico-apiserver-tls");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a directory for the self-signed serving certificate", e);
        }
    }
}
