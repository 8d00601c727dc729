package calico.controllers.cyclefixture.b;

/** The other half of the deliberate package cycle. */
public final class B {
    public calico.controllers.cyclefixture.a.A a() {
        return null;
    }
}
