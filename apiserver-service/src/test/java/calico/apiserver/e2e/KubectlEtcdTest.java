package calico.apiserver.e2e;

import calico.libcalico.testing.EtcdServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kubectl scenarios against a real etcd (libcalico's test etcd). */
class KubectlEtcdTest extends KubectlScenarios {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    static ApiServerFixture server;

    @BeforeAll
    static void start() {
        server = ApiServerFixture.start(ETCD.endpoint().toString());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Override
    ApiServerFixture server() {
        return server;
    }
}
