package calico.launcher;

/**
 * {@code --encapsulation}: the default pool's mode, which calico-node's start-up writes when it
 * creates the pool ({@code CALICO_IPV4POOL_VXLAN} / {@code CALICO_IPV4POOL_IPIP}), and the
 * networking backend: BIRD carries the routes with {@code none} and IPIP (Calico's {@code bird}
 * backend), felix alone with VXLAN (Calico's {@code vxlan} backend: no confd, no BIRD).
 */
enum Encapsulation {
    NONE("Never", "Never", "bird"),
    VXLAN("Always", "Never", "vxlan"),
    IPIP("Never", "Always", "bird");

    private final String vxlanMode;
    private final String ipipMode;
    private final String backend;

    Encapsulation(String vxlanMode, String ipipMode, String backend) {
        this.vxlanMode = vxlanMode;
        this.ipipMode = ipipMode;
        this.backend = backend;
    }

    static Encapsulation parse(String value) {
        for (Encapsulation e : values()) {
            if (e.name().equalsIgnoreCase(value)) {
                return e;
            }
        }
        throw new IllegalArgumentException("--encapsulation: '" + value + "' is not none, vxlan or ipip");
    }

    String vxlanMode() {
        return vxlanMode;
    }

    String ipipMode() {
        return ipipMode;
    }

    /** {@return Calico's {@code CALICO_NETWORKING_BACKEND}} for this mode. */
    String backend() {
        return backend;
    }

    boolean bgp() {
        return backend.equals("bird");
    }
}
