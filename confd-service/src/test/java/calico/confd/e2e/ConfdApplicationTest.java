package calico.confd.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.libcalico.testing.EtcdServerExtension;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/** {@link ConfdApplicationContract} over a real etcd, and confd with BGP off. */
class ConfdApplicationTest extends ConfdApplicationContract {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected List<String> datastoreArgs() {
        return List.of("--confd.datastore-type=etcdv3", "--confd.etcd-endpoints=" + ETCD.endpoint());
    }

    /** CALICO_NETWORKING_BACKEND=none: no datastore, no BIRD, healthy and ready, /peers says so. */
    @Test
    void bgpOffIsIdleAndReady() throws Exception {
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(ConfdApplication.class).run(
                "--confd.networking-backend=none", "--confd.nodename=", "--server.port=0",
                "--server.address=127.0.0.1", "--calico.health.port=0", "--calico.health.host=127.0.0.1")) {
            int web = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
            int health = Integer.parseInt(ctx.getEnvironment().getProperty("local.management.port"));
            Await.until("readiness", WAIT, () -> get(health, "/readiness").statusCode() == 200);
            assertThat(get(web, "/peers").body()).contains("\"configResult\":\"DISABLED\"");
            assertThat(get(health, "/actuator/health").body()).contains("disabled (CALICO_NETWORKING_BACKEND=none)");
        }
    }
}
