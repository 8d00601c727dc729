package calico.confd.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import calico.confd.Await;
import calico.confd.app.ConfdApplication;
import calico.libcalico.testing.EtcdServerExtension;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link ConfdApplicationContract} over a real etcd, and confd with BGP off. */
class ConfdApplicationTest extends ConfdApplicationContract {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Override
    protected Map<String, String> datastoreVariables() {
        return Map.of("DATASTORE_TYPE", "etcdv3", "ETCD_ENDPOINTS", ETCD.endpoint().toString());
    }

    /** CALICO_NETWORKING_BACKEND=none: no datastore, no BIRD, healthy and ready, /peers says so. */
    @Test
    void bgpOffIsIdleAndReady() throws Exception {
        try (ConfdApplication app = ConfdApplication.start(Map.of("CALICO_NETWORKING_BACKEND", "none", "NODENAME", "",
                "HOSTNAME", "", "CONFD_ADMINPORT", "0", "CONFD_ADMINHOST", "127.0.0.1", "CONFD_HEALTHPORT", "0",
                "CONFD_HEALTHHOST", "127.0.0.1"))) {
            int web = app.adminPort();
            int health = app.healthPort();
            Await.until("readiness", WAIT, () -> get(health, "/readiness").statusCode() == 200);
            assertThat(get(web, "/peers").body()).contains("\"configResult\":\"DISABLED\"");
            assertThat(get(health, "/actuator/health").body()).contains("disabled (CALICO_NETWORKING_BACKEND=none)");
        }
    }
}
