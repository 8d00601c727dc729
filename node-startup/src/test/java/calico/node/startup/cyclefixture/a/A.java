package calico.node.startup.cyclefixture.a;

/** Half of a deliberate package cycle ({@code PackageCyclesTest.aCycleIsFound}). */
public final class A {
    public static int one() {
        return 1;
    }

    public static int viaB() {
        return calico.node.startup.cyclefixture.b.B.two();
    }
}
