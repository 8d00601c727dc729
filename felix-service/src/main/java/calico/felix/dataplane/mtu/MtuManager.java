package calico.felix.dataplane.mtu;

import calico.dataplane.netlink.Link;
import calico.felix.calc.DataplaneUpdate.IpPoolUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@link Mtus} and the MTU file true, on the kernel dataplane's thread: the host MTU is
 * detected ({@link HostMtu}) when the configuration first arrives, when {@code mtuIfacePattern}
 * changes and after any link announcement (an MTU change is one); the MTUs are recomputed after
 * every apply (the configuration or the pools may have changed which encapsulations are on) and
 * the file is written whenever the pod MTU differs from what was last written. Nothing happens
 * before the model has its configuration (the pattern and the configured MTUs come with it).
 * Calico's felix detects at start and restarts itself when a 30 s poll finds another host MTU;
 * here the link monitor's announcements take the place of both.
 */
public final class MtuManager {

    private static final Logger log = LoggerFactory.getLogger(MtuManager.class);

    private final Supplier<List<Link>> links;
    private final Optional<MtuFile> file;
    private String pattern;
    private Pattern compiled;
    private int hostMtu;
    private boolean redetect = true;
    private int written;
    private volatile Mtus current;
    private String writeError;

    /**
     * @param links lists the programmed namespace's links (netlink, on the calling thread)
     * @param file  where the pod MTU goes; empty: computed, never written
     */
    public MtuManager(Supplier<List<Link>> links, Optional<MtuFile> file) {
        this.links = links;
        this.file = file;
    }

    /** A link appeared, changed or vanished (or announcements were lost): detect the host MTU again. */
    public void linksChanged() {
        redetect = true;
    }

    /**
     * Recomputes from {@code model} (and the links, when they may have changed); writes the file
     * when the pod MTU changed. {@return the MTUs}, empty before the model has its configuration. A
     * file that cannot be written is logged once (as Calico: "pod MTU may not be properly set") and
     * tried again at the next update; {@link #writeError()} says why meanwhile.
     */
    public Optional<Mtus> update(DataplaneModel model) {
        if (!model.hasConfig()) {
            return Optional.empty();
        }
        FelixSettings s = model.config();
        if (!s.mtuIfacePattern().equals(pattern)) {
            pattern = s.mtuIfacePattern();
            compiled = Pattern.compile(pattern);
            redetect = true;
        }
        if (redetect) {
            int detected = HostMtu.detect(links.get(), compiled);
            redetect = false;
            if (detected != hostMtu) {
                log.info("Host MTU {} (interfaces matching {})", detected, pattern);
                hostMtu = detected;
            }
        }
        Mtus m = Mtus.of(hostMtu, enabled(s, model.pools().values()), new Mtus.Configured(s.ipipMtu(), s.vxlanMtu(),
                s.vxlanMtuV6(), s.wireguardMtu(), s.wireguardMtuV6()));
        current = m;
        if (file.isPresent() && m.pod() != written) {
            try {
                file.get().write(m.pod());
                written = m.pod();
                writeError = null;
                log.info("Pod MTU {} written to {} ({})", m.pod(), file.get().path(), m);
            } catch (java.io.UncheckedIOException e) {
                if (writeError == null) {
                    log.error("Cannot write the pod MTU ({}); new pods may not get it: {}", m.pod(), e.getMessage());
                }
                writeError = e.getMessage();
            }
        }
        return Optional.of(m);
    }

    /** {@return why the MTU file could not be written}, empty when it holds the pod MTU (or there is none to write). */
    public Optional<String> writeError() {
        return Optional.ofNullable(writeError);
    }

    /** {@return the MTUs last computed}, empty before the configuration arrived; any thread. */
    public Optional<Mtus> current() {
        return Optional.ofNullable(current);
    }

    /**
     * Which encapsulations are on, as Calico's felix decides: {@code ipipEnabled} / {@code vxlanEnabled}
     * when set, else whether an enabled pool uses the mode (VXLAN per family: IPv4 pools for
     * {@code vxlan.calico}, IPv6 pools for {@code vxlan-v6.calico}; an explicit {@code vxlanEnabled:
     * false} turns both off); WireGuard from {@code wireguardEnabled} and {@code wireguardEnabledV6}.
     */
    static Mtus.Enabled enabled(FelixSettings s, Collection<IpPoolUpdate> pools) {
        boolean ipip = s.ipipEnabled().orElseGet(() -> pools.stream().anyMatch(p -> uses(p, p.ipipMode())));
        boolean vxlan = s.vxlanEnabled().orElseGet(() -> pools.stream()
                .anyMatch(p -> uses(p, p.vxlanMode()) && IpFamily.of(p.cidr()) == IpFamily.V4));
        boolean vxlanV6 = s.vxlanEnabled().orElse(true) && pools.stream()
                .anyMatch(p -> uses(p, p.vxlanMode()) && IpFamily.of(p.cidr()) == IpFamily.V6);
        return new Mtus.Enabled(ipip, vxlan, vxlanV6, s.wireguardEnabled(), s.wireguardEnabledV6());
    }

    private static boolean uses(IpPoolUpdate p, String mode) {
        return !p.disabled() && p.cidr() != null && !p.cidr().isBlank() && mode != null && !mode.isBlank()
                && !mode.equalsIgnoreCase("Never");
    }
}
