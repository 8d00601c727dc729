package calico.felix.calc;

import calico.api.model.EncapsulationMode;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.syncer.Update;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * IPPool resources to {@link DataplaneUpdate.IpPoolUpdate}/{@code IpPoolRemove}, keyed by pool
 * name, with Calico's defaults filled in (modes {@code Never}, natOutgoing and disabled false)
 * and the CIDR in its network form. A pool whose CIDR does not parse is treated as absent
 * (fail closed: no NAT or encapsulation for addresses we cannot place) and logged.
 */
public final class IpPoolStage {

    private static final Logger log = LoggerFactory.getLogger(IpPoolStage.class);

    private final InfraListener out;
    /** What was last sent per pool: no-op suppression and remove-only-after-add. */
    private final Map<String, DataplaneUpdate.IpPoolUpdate> sent = new HashMap<>();

    public IpPoolStage(InfraListener out) {
        this.out = out;
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.IP_POOL, this::onUpdate);
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        DataplaneUpdate.IpPoolUpdate next = update.value() instanceof IPPool pool ? toUpdate(name, pool.spec()) : null;
        if (next == null) {
            if (sent.remove(name) != null) {
                out.onInfraUpdate(new DataplaneUpdate.IpPoolRemove(name));
            }
            return;
        }
        if (!next.equals(sent.put(name, next))) {
            out.onInfraUpdate(next);
        }
    }

    /** {@return the pool as the dataplane sees it}, or {@code null} when its CIDR is unusable. */
    static DataplaneUpdate.IpPoolUpdate toUpdate(String name, IPPoolSpec spec) {
        Cidr cidr = spec == null ? null : Cidr.tryParse(spec.cidr()).orElse(null);
        if (cidr == null) {
            log.warn("IPPool {} spec.cidr \"{}\" is not a CIDR; pool ignored", name, spec == null ? null : spec.cidr());
            return null;
        }
        return new DataplaneUpdate.IpPoolUpdate(name, cidr.network().toString(),
                Boolean.TRUE.equals(spec.natOutgoing()),
                mode(spec.ipipMode()), mode(spec.vxlanMode()),
                Boolean.TRUE.equals(spec.disabled()));
    }

    private static String mode(EncapsulationMode m) {
        return (m == null ? EncapsulationMode.Never : m).name();
    }
}
