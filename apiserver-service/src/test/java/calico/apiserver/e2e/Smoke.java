package calico.apiserver.e2e;

/** Manual smoke run: starts the server on the memory datastore and prints its URL. */
public final class Smoke {
    public static void main(String[] args) throws Exception {
        ApiServerFixture f = ApiServerFixture.start(null);
        System.out.println("URL " + f.url() + " mgmt " + f.managementPort());
        Thread.sleep(Long.MAX_VALUE);
    }
}
