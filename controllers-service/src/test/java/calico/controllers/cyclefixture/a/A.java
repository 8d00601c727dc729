package calico.controllers.cyclefixture.a;

/** Half of a deliberate package cycle ({@code PackageCyclesTest} must find it). */
public final class A {
    public calico.controllers.cyclefixture.b.B b() {
        return null;
    }
}
