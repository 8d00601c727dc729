package calico.felix.app;

import calico.felix.dataplane.Dataplane;
import calico.felix.dataplane.KernelDataplane;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /felix/v1/dataplane}: which dataplane runs and, for the kernel dataplane, the active
 * policy backend, the last apply (time, duration, batch size, driver stats, error), what is
 * programmed, the counters, pending interfaces, the unresolved errors (what keeps felix not
 * ready) and the recent ones (resolved or not), and the MTUs (host, per encapsulation, pod). With the model dataplane it
 * says so and nothing more.
 */
public class KernelDataplaneAdminController {

    private final ProgrammedState state;

    public KernelDataplaneAdminController(ProgrammedState state) {
        this.state = state;
    }

    public Map<String, Object> dataplane() {
        Map<String, Object> out = new LinkedHashMap<>();
        Dataplane d = state.dataplane();
        if (d instanceof KernelDataplane k) {
            out.put("driver", "kernel");
            out.put("status", k.status());
            out.put("errors", k.errors());
            out.put("recentErrors", k.recentErrors());
            out.put("mtus", k.mtus().orElse(null)); // host, per encapsulation, pod (null before the configuration)
        } else {
            out.put("driver", "model");
            out.put("backend", "none");
            out.put("errors", List.copyOf(d.errors()));
        }
        return out;
    }
}
