package calico.felix.cyclefixture.a;

/** Half of a deliberate package cycle ({@code PackageCyclesTest.aCycleIsFound}). */
public final class A {
    public static int one() {
        return 1;
    }

    public static int viaB() {
        return calico.felix.cyclefixture.b.B.two();
    }
}
