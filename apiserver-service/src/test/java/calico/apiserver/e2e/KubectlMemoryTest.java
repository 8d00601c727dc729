package calico.apiserver.e2e;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The kubectl scenarios on the memory datastore. */
class KubectlMemoryTest extends KubectlScenarios {

    static ApiServerFixture server;

    @BeforeAll
    static void start() {
        server = ApiServerFixture.start(null);
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
