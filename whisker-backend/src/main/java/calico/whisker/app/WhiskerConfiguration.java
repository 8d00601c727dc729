package calico.whisker.app;

import calico.libcalico.health.HealthAggregator;
import calico.whisker.api.FlowWatches;
import calico.whisker.auth.AuthFilter;
import calico.whisker.auth.AuthMode;
import calico.whisker.auth.Authenticator;
import calico.whisker.goldmane.GoldmaneClient;
import calico.whisker.web.JsonErrorReportValve;
import calico.whisker.web.SecurityHeadersFilter;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/** Wiring: one goldmane client, live streams over it, and the two filters in front of everything. */
@Configuration(proxyBeanMethods = false)
class WhiskerConfiguration {

    private static final Logger log = LoggerFactory.getLogger(WhiskerConfiguration.class);

    @Bean(destroyMethod = "close")
    GoldmaneClient goldmaneClient(WhiskerProperties p, HealthAggregator health) {
        return new GoldmaneClient(p.goldmane(), health);
    }

    @Bean(destroyMethod = "close")
    FlowWatches flowWatches(GoldmaneClient goldmane, WhiskerProperties p, MeterRegistry meters) {
        return new FlowWatches(goldmane, p.keepAlive(), meters);
    }

    @Bean
    Authenticator authenticator(WhiskerProperties p) {
        if (p.mode() == AuthMode.NONE) {
            log.warn("WHISKER_AUTH_MODE=none: the flow API is open to anyone who can reach this port; "
                    + "use it on a local machine only");
        } else {
            log.info("authentication: {}", p.mode().name().toLowerCase(java.util.Locale.ROOT));
        }
        return p.authenticator();
    }

    /** Replaces the HTML error valve Boot installs, so even Tomcat's own rejections are JSON. */
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> jsonErrorValve() {
        return new WebServerFactoryCustomizer<>() {
            @Override
            public void customize(TomcatServletWebServerFactory f) {
                f.addContextCustomizers(ctx -> {
                    var host = (org.apache.catalina.Host) ctx.getParent();
                    for (var v : host.getPipeline().getValves()) {
                        if (v instanceof ErrorReportValve) {
                            host.getPipeline().removeValve(v);
                        }
                    }
                    host.getPipeline().addValve(new JsonErrorReportValve());
                    if (host instanceof org.apache.catalina.core.StandardHost sh) {
                        // else the host adds its default HTML valve again at start
                        sh.setErrorReportValveClass(JsonErrorReportValve.class.getName());
                    }
                });
            }
        };
    }

    /** First: the headers are on every response, including 401s and errors. */
    @Bean
    FilterRegistrationBean<SecurityHeadersFilter> securityHeaders() {
        var r = new FilterRegistrationBean<>(new SecurityHeadersFilter());
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        r.setDispatcherTypes(EnumSet.allOf(DispatcherType.class));
        return r;
    }

    /** Before any handler, so no goldmane call happens for an unauthenticated request. */
    @Bean
    FilterRegistrationBean<AuthFilter> authFilter(Authenticator authenticator) {
        var r = new FilterRegistrationBean<>(new AuthFilter(authenticator));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
        r.setDispatcherTypes(DispatcherType.REQUEST);
        return r;
    }
}
