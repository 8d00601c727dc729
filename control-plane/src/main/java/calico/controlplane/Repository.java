package calico.controlplane;

import java.nio.file.Files;
import java.nio.file.Path;

/** The checkout this code runs from: the nearest directory up from the working one holding {@code control-plane/go/go.mod}. */
public final class Repository {

    private Repository() {
    }

    /** {@return the checkout's root}; {@code CALICO_REPOSITORY} overrides the search. */
    public static Path root() {
        String explicit = System.getenv("CALICO_REPOSITORY");
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit).toAbsolutePath();
        }
        Path start = Path.of("").toAbsolutePath();
        for (Path p = start; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("control-plane").resolve("go").resolve("go.mod"))) {
                return p;
            }
        }
        throw new IllegalStateException("not inside the calico checkout (no control-plane/go/go.mod above " + start
                + "); set CALICO_REPOSITORY to the checkout");
    }

    /** {@return the Calico CRD manifests} the chart ships, {@code charts/calico/crds}. */
    public static Path crds() {
        return root().resolve("charts").resolve("calico").resolve("crds");
    }
}
