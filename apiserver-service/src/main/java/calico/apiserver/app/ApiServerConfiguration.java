package calico.apiserver.app;

import calico.apiserver.auth.Authenticator;
import calico.apiserver.auth.Authorizer;
import calico.apiserver.auth.RbacRules;
import calico.apiserver.auth.SubjectAccessReviews;
import calico.apiserver.auth.TokenFile;
import calico.apiserver.http.ApiServlet;
import calico.apiserver.openapi.OpenApi;
import calico.apiserver.rest.ObjectCodec;
import calico.apiserver.rest.ResourceHandler;
import calico.apiserver.watch.WatchStreamer;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreConfig;
import calico.libcalico.datastore.memory.MemoryDatastore;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.servlet.ConfigurableServletWebServerFactory;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Wires the API server: datastore, handlers, authentication, authorization, the servlet and TLS. */
@Configuration(proxyBeanMethods = false)
public class ApiServerConfiguration {

    /** Bookmarks of the memory datastore: its clients (ApiServerDatastore watches) learn progress from them. */
    static final Duration MEMORY_BOOKMARK_INTERVAL = Duration.ofSeconds(2);

    @Bean(destroyMethod = "close")
    Datastore datastore(ApiServerProperties props) {
        DatastoreConfig config = props.datastore();
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

    @Bean
    Authenticator authenticator(ApiServerProperties props) {
        TokenFile tokens = ApiServerProperties.blank(props.tokenAuthFile()) ? TokenFile.empty()
                : TokenFile.read(Path.of(props.tokenAuthFile()));
        return new Authenticator(ServingCertificates.read(props.clientCaFile()),
                ServingCertificates.read(props.requestheaderClientCaFile()), props.requestheaderAllowedNames(),
                props.requestheaderUsernameHeaders(), props.requestheaderGroupHeaders(), tokens);
    }

    @Bean
    Authorizer authorizer(ApiServerProperties props) {
        if (!ApiServerProperties.blank(props.authorizationKubeconfig())) {
            return new Authorizer(new SubjectAccessReviews(Path.of(props.authorizationKubeconfig())));
        }
        return new Authorizer(ApiServerProperties.blank(props.authorizationRulesFile()) ? RbacRules.none()
                : RbacRules.read(Path.of(props.authorizationRulesFile())));
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

    /** HTTPS on --secure-port with the given or a generated pair; client certificates requested, not required. */
    @Bean
    WebServerFactoryCustomizer<ConfigurableServletWebServerFactory> tls(ApiServerProperties props) {
        return factory -> {
            Ssl ssl = new Ssl();
            ssl.setEnabled(true);
            try {
                Path dir = Files.createTempDirectory("calico-apiserver-tls");
                dir.toFile().deleteOnExit();
                String cert = props.tlsCertFile();
                String key = props.tlsPrivateKeyFile();
                if (ApiServerProperties.blank(cert)) {
                    Path[] pair = ServingCertificates.selfSigned(dir);
                    cert = pair[0].toString();
                    key = pair[1].toString();
                }
                ssl.setCertificate("file:" + cert);
                ssl.setCertificatePrivateKey("file:" + key);
                List<X509Certificate> cas = new ArrayList<>(ServingCertificates.read(props.clientCaFile()));
                cas.addAll(ServingCertificates.read(props.requestheaderClientCaFile()));
                if (!cas.isEmpty()) {
                    StringBuilder pem = new StringBuilder();
                    for (String f : new String[] {props.clientCaFile(), props.requestheaderClientCaFile()}) {
                        if (!ApiServerProperties.blank(f)) {
                            pem.append(Files.readString(Path.of(f))).append('\n');
                        }
                    }
                    Path trust = dir.resolve("client-cas.pem");
                    Files.writeString(trust, pem);
                    ssl.setTrustCertificate("file:" + trust);
                    ssl.setClientAuth(Ssl.ClientAuth.WANT);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            factory.setSsl(ssl);
        };
    }
}
