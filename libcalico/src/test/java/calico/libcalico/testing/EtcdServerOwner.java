package calico.libcalico.testing;

/**
 * A test JVM in miniature, for {@link EtcdServerLeftoversTest}: starts an etcd on tmpfs, prints its
 * pid and its directory ({@code PID DIR}), then waits until stdin closes (or it is killed).
 */
public final class EtcdServerOwner {

    private EtcdServerOwner() {
    }

    public static void main(String[] args) throws Exception {
        EtcdServer etcd = EtcdServer.startOnTmpfs();
        System.out.println(etcd.pid() + " " + etcd.directory());
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
        etcd.close();
    }
}
