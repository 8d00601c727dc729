package calico.node.startup.cyclefixture.b;

/** The other half of the deliberate package cycle. */
public final class B {
    public static int two() {
        return 2;
    }

    public static int viaA() {
        return calico.node.startup.cyclefixture.a.A.one();
    }
}
