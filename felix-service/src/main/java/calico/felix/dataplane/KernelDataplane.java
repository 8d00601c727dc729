package calico.felix.dataplane;

import calico.dataplane.iptables.IptablesBackend;
import calico.dataplane.netlink.LinkUpdate;
import calico.dataplane.netlink.NetNamespace;
import calico.dataplane.netlink.Netlink;
import calico.dataplane.netlink.Sysctls;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.FelixSettings;
import calico.felix.dataplane.mtu.MtuFile;
import calico.felix.dataplane.mtu.MtuManager;
import calico.felix.dataplane.mtu.Mtus;
import calico.felix.dataplane.routes.RemoteRouteManager;
import calico.felix.dataplane.routes.RemoteRoutes;
import calico.felix.dataplane.routes.RouteManager;
import calico.felix.dataplane.wireguard.WireguardHost;
import calico.felix.dataplane.wireguard.WireguardManager;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.PolicyDriver;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel dataplane: a {@link PolicyDriver} (iptables or nftables, chosen from the effective
 * FelixConfiguration, see {@link BackendChoice}) and {@link RouteManager} (routes and interface
 * sysctls), driven from one dedicated thread ({@link DataplaneThread}). Netlink must be created
 * and used on a single thread, and that thread's network namespace is the one programmed: with a
 * namespace name the thread first enters {@code /run/netns/<name>} and the iptables tools run
 * under {@code ip netns exec <name>}, so a containerised felix (or a test) programs that
 * namespace and never the process's own.
 *
 * <p>This class coordinates small pieces, each with its own invariant in kernel-dataplane.md:
 *
 * <pre>
 *  graph ─apply─► ApplyQueue ─takeAll (ApplyPacing: when)─► dataplane thread:
 *                   DataplaneModel.apply ─► BackendSwitcher.apply (driver choice, make-before-break switch)
 *                                  ─► RouteManager.update (reads the model) ─► StatusBoard (counters,
 *                                     failures) ─► observer
 *                   RefreshScheduler: settle after the last apply, periodic refresh (driver read-back, routes)
 *  LinkMonitor ─post─► RouteManager.onLinkUpdate, MtuManager (host MTU re-detected, MTU file rewritten)
 *  admin API / readiness ◄─ StatusBoard (+ ApplyQueue counts, refresh interval)
 * </pre>
 *
 * <p>{@link #apply} queues the batch for the thread and returns; while the thread applies one
 * batch, later ones queue, and the next apply takes every queued batch, concatenated in order
 * (one render, one restore: catching up costs the fixed per-apply costs once, not once per
 * batch). The queue is bounded ({@value #MAX_QUEUED_UPDATES} updates): beyond it {@link #apply}
 * blocks, so the syncer still sees back-pressure. {@link #awaitApplied} waits for everything
 * handed over so far; {@link #status()}'s {@code lastApply} and {@code applies} say what is in
 * the kernel. The thread first folds every batch into the one {@link DataplaneModel}, which the
 * driver renders: when a ConfigUpdate changes the backend choice, the thread starts the new driver
 * first on the same model (its first apply is a full resync of it), and only then removes the old driver's rules (keeping IP
 * sets both iptables drivers share: the new driver has already replaced them by swap), so the
 * namespace always has complete rules; routes are not touched. A write does not read the rules
 * back; {@value RefreshScheduler#SETTLE_MILLIS} ms after the last apply (and at every refresh) the
 * driver reads them back and checks them (see {@code IptablesDataplane.refresh}). Failures are
 * never thrown: they are recorded (see {@link #errors()}, which lists only unresolved ones, and
 * {@link #recentErrors()}) and the next batch starts with a full resync. A periodic refresh on
 * the same thread (every {@code iptablesRefreshInterval}, default 180s) repairs drift. A {@link
 * LinkMonitor} watches the namespace's links so an endpoint's interface that appears or comes up
 * is routed at once.
 */
public final class KernelDataplane implements Dataplane, AutoCloseable {

    /**
     * A point-in-time view for the admin API.
     *
     * @param applies       driver applies so far (each takes every batch queued behind the previous one)
     * @param queuedBatches batches handed to {@link #apply} and not yet applied (in the queue or in the running apply):
     *                      0 means the kernel has everything felix's graph has sent
     * @param batches       graph batches handed to {@link #apply} so far
     * @param applyTime     the dataplane thread's total time in applies (how busy it has been)
     */
    public record Status(String backend, String netns, KernelApplyStatus lastApply, PolicyDriver.Programmed programmed,
                         long applies, long queuedBatches, long batches, Duration applyTime, long resyncs, long refreshes, long repairs,
                         long backendRestarts, long failures, long linkUpdates, Set<String> pendingInterfaces,
                         Duration refreshInterval, boolean inSync, BackendSwitch lastBackendSwitch) {
    }

    /**
     * One run-time driver switch.
     *
     * @param unprotected the time the namespace had no complete policy rules: zero, since the new
     *                    driver's rules are complete before the old driver's go
     * @param took        from creating the new driver to the old one's rules removed
     */
    public record BackendSwitch(java.time.Instant at, String from, String to, Duration unprotected, Duration took) {
    }

    private static final Logger log = LoggerFactory.getLogger(KernelDataplane.class);
    private static final Duration DEFAULT_REFRESH = RefreshScheduler.DEFAULT_REFRESH;
    /**
     * Queued updates beyond which {@link #apply} blocks (back-pressure on the syncer) and a
     * gathering apply starts early. 10,000 made a 4,055-resource catch-up 134 applies; 50,000
     * makes it ~20 (PolicyScaleBench, design/e2e-tests.md).
     */
    static final int MAX_QUEUED_UPDATES = 50_000;
    /** See {@link ApplyPacing#MORE_COMING_MIN_UPDATES}. */
    static final int MORE_COMING_MIN_UPDATES = ApplyPacing.MORE_COMING_MIN_UPDATES;

    private final String netns;
    private final DataplaneObserver observer;
    private final Clock clock = Clock.systemUTC();
    private final StatusBoard board;
    private final ApplyQueue queue = new ApplyQueue(MAX_QUEUED_UPDATES);
    private final DataplaneThread thread;
    private final BackendSwitcher switcher;
    private final LinkMonitor links;
    /** The MTUs and the MTU file; used on {@link #thread} only, its {@code current()} read anywhere. */
    private final MtuManager mtu;

    // ---- Confined to {@link #thread}.
    private Netlink netlink;
    private Sysctls sysctls;
    private RouteManager routes;
    private WireguardRunner wireguard;
    /** IPv6 WireGuard ({@code wireguardEnabledV6}): its own device, key, table and runner. */
    private WireguardRunner wireguardV6;
    private RemoteRouteManager remoteRoutes;
    /** The IPv6 routes to other nodes and {@code vxlan-v6.calico}: the same manager for the other family. */
    private RemoteRouteManager remoteRoutesV6;
    private RefreshScheduler refresher;
    /** Written on the dataplane thread only, batch by batch; other threads read it through {@link DataplaneModel#read}. */
    private final DataplaneModel model = new DataplaneModel();
    private final ResyncNeeded needResync = new ResyncNeeded();
    private final ApplyPacing pacing = new ApplyPacing();
    private String forwardingApplied;

    /** The standard drivers ({@link KernelPolicyDrivers}), no observer. */
    public KernelDataplane(String netns) {
        this(netns, new KernelPolicyDrivers(commandPrefix(netns)),
                DataplaneObserver.NONE);
    }

    /**
     * @param netns    network namespace name to program, empty or null for the process's own
     * @param factory  makes the policy driver for the configured backend (on the dataplane thread)
     * @param observer told about applies, refreshes, failures and backend starts (metrics)
     */
    public KernelDataplane(String netns, PolicyDriverFactory factory, DataplaneObserver observer) {
        this(netns, factory, observer, Optional.empty());
    }

    /**
     * As above, with what WireGuard needs from felix (this node's name, where wireguard-go's
     * sockets go, who publishes the public key); without it WireGuard is never programmed.
     */
    public KernelDataplane(String netns, PolicyDriverFactory factory, DataplaneObserver observer,
                           WireguardHost wireguardHost) {
        this(netns, factory, observer, Optional.empty(), wireguardHost);
    }

    /**
     * As {@link #KernelDataplane(String, PolicyDriverFactory, DataplaneObserver)}, writing the pod
     * MTU to {@code mtuFile} (felix's {@code FELIX_MTUFILEPATH}); empty: MTUs computed, no file.
     */
    public KernelDataplane(String netns, PolicyDriverFactory factory, DataplaneObserver observer,
                           Optional<MtuFile> mtuFile) {
        this(netns, factory, observer, mtuFile, WireguardHost.NONE);
    }

    /** Both of the above: the pod MTU file and WireGuard's needs. */
    public KernelDataplane(String netns, PolicyDriverFactory factory, DataplaneObserver observer,
                           Optional<MtuFile> mtuFile, WireguardHost wireguardHost) {
        Objects.requireNonNull(wireguardHost, "wireguardHost");
        this.netns = netns == null ? "" : netns.trim();
        this.mtu = new MtuManager(() -> netlink.links(), Objects.requireNonNull(mtuFile, "mtuFile"));
        Objects.requireNonNull(factory, "factory");
        this.observer = Objects.requireNonNull(observer, "observer");
        this.board = new StatusBoard(observer);
        List<String> prefix = commandPrefix(this.netns);
        this.switcher = new BackendSwitcher(factory, model, () -> IptablesBackend.detect(prefix), observer, board, clock);
        String threadName = this.netns.isEmpty() ? "felix-dataplane" : "felix-dataplane-" + this.netns;
        thread = new DataplaneThread(threadName, board::record);
        try {
            thread.run(() -> {
                if (!this.netns.isEmpty()) {
                    NetNamespace.enterNamed(this.netns);
                }
                netlink = new Netlink();
                if (calico.felix.dataplane.rules.KubeIpvs.detect(
                        netlink.links().stream().map(calico.dataplane.netlink.Link::name).toList())) {
                    log.info("Kube-proxy in IPVS mode ({} found): NodePort and service traffic policed as forwarded",
                            calico.felix.dataplane.rules.Names.KUBE_IPVS_INTERFACE);
                    model.kubeIpvs(true);
                }
                sysctls = new Sysctls();
                routes = new RouteManager(netlink, sysctls, model,
                        new RouteManager.Timings(observer::routesListed, observer::interfaceRoutesSynced));
                wireguard = new WireguardRunner(new WireguardManager(netlink, sysctls, model, wireguardHost,
                        () -> calico.dataplane.wireguard.WireguardBackend.choose(prefix, wireguardHost.socketDir()),
                        () -> mtu.current().orElseThrow(
                                () -> new IllegalStateException("WireGuard device MTU: no configuration yet")).wireguard()),
                        thread, model, this::record);
                wireguardV6 = new WireguardRunner(new WireguardManager(netlink, sysctls, model, wireguardHost,
                        () -> calico.dataplane.wireguard.WireguardBackend.choose(prefix, wireguardHost.socketDir()),
                        () -> mtu.current().orElseThrow(
                                () -> new IllegalStateException("WireGuard device MTU: no configuration yet")).wireguardV6(),
                        IpFamily.V6), thread, model, this::record);
                // The VXLAN device's MTU is the one MTU calculation's (updateMtu runs before the routes).
                remoteRoutes = new RemoteRouteManager(netlink, model, IpFamily.V4,
                        () -> mtu.current().orElseThrow(
                                () -> new IllegalStateException("VXLAN device MTU: no configuration yet")).vxlan(),
                        () -> mtu.current().orElseThrow(
                                () -> new IllegalStateException("tunl0 MTU: no configuration yet")).ipip());
                remoteRoutesV6 = new RemoteRouteManager(netlink, model, IpFamily.V6,
                        () -> mtu.current().orElseThrow(
                                () -> new IllegalStateException("VXLAN device MTU: no configuration yet")).vxlanV6());
                refresher = new RefreshScheduler(thread, board, observer, routes, this::resyncRemoteRoutes,
                        switcher::driver, needResync, queue, Duration.ofMillis(RefreshScheduler.SETTLE_MILLIS));
                refresher.every(DEFAULT_REFRESH);
            });
        } catch (RuntimeException e) {
            thread.shutdownNow();
            throw new IllegalStateException("kernel dataplane (namespace "
                    + (this.netns.isEmpty() ? "own" : this.netns) + "): " + e.getMessage(), e);
        }
        links = new LinkMonitor(this.netns, new LinkMonitor.Listener() {
            @Override
            public void updates(List<LinkUpdate> updates) {
                thread.post(() -> onLinksOnThread(updates), "link handling");
            }

            @Override
            public void lost() {
                thread.post(() -> {
                    needResync.set();
                    PolicyDriver policy = switcher.driver();
                    if (policy != null) {
                        try {
                            policy.onLinksLost();
                        } catch (RuntimeException e) {
                            record("link re-read (" + policy.name() + "): " + e);
                        }
                    }
                    routes.resync();
                    mtu.linksChanged();
                    updateMtuAndDevices();
                }, "link handling");
            }

            @Override
            public void failed(String error) {
                record(error);
            }
        });
        log.info("Kernel dataplane in namespace {}; the policy backend follows FelixConfiguration",
                this.netns.isEmpty() ? "(own)" : this.netns);
    }

    /** The periodic refresh's part for routes to other nodes; {@return items repaired}. */
    private int resyncRemoteRoutes() {
        if (!model.inSync()) {
            return 0;
        }
        int repaired = 0;
        for (RemoteRouteManager m : remoteRouteManagers()) {
            repaired += m.resync().entriesChanged();
        }
        return repaired;
    }

    /** {@return the command prefix that runs a tool in namespace {@code netns}} (empty for our own). */
    public static List<String> commandPrefix(String netns) {
        return netns == null || netns.isBlank() ? List.of() : List.of("ip", "netns", "exec", netns.trim());
    }

    /**
     * Queues the batch for the dataplane thread and returns; blocks first while more than
     * {@value #MAX_QUEUED_UPDATES} updates are queued. A batch carrying {@code InSync} is waited
     * for, so the caller's readiness report right after it sees {@link #inSync()} true. Never throws.
     */
    @Override
    public void apply(List<DataplaneUpdate> batch) {
        List<DataplaneUpdate> copy = List.copyOf(batch);
        ApplyQueue.Offered offered;
        try {
            offered = queue.offer(copy);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            record("apply of " + copy.size() + " updates: interrupted waiting for the dataplane thread");
            return;
        }
        if (offered == ApplyQueue.Offered.CLOSED) {
            return;
        }
        if (offered == ApplyQueue.Offered.POST_DRAIN) {
            thread.post(this::drainOnThread, "apply");
        }
        if (copy.stream().anyMatch(u -> u instanceof DataplaneUpdate.InSync)) {
            awaitApplied(Duration.ofDays(1));
        }
    }

    /**
     * Waits until every batch handed to {@link #apply} before this call is in the kernel (or
     * failed, see {@link #errors()}); {@return false} on timeout or when closed first.
     */
    public boolean awaitApplied(Duration timeout) {
        return queue.awaitApplied(timeout);
    }

    /** Takes every queued batch and applies them as one (after gathering, see {@link ApplyPacing}). */
    private void drainOnThread() {
        boolean catchingUp = pacing.catchingUp();
        if (catchingUp) {
            long wait = pacing.gatherWait(System.nanoTime(), queue.arrival());
            if (wait > 0) {
                thread.schedule(this::drainOnThread, wait, "apply"); // the drain stays posted: batches keep queueing for it
                return;
            }
        }
        List<List<DataplaneUpdate>> taken = queue.takeAll();
        try {
            List<DataplaneUpdate> all;
            if (taken.size() == 1) {
                all = taken.get(0);
            } else {
                all = new ArrayList<>();
                taken.forEach(all::addAll);
            }
            long start = System.nanoTime();
            board.applyStarted(start);
            boolean mayHold = pacing.mayHold(catchingUp, all.size(), start);
            // asked once the driver has rendered: batches that came meanwhile say a catch-up streams on
            BooleanSupplier moreComing = () -> mayHold && !queue.isEmpty();
            try {
                applyOnThread(all, taken.size(), moreComing);
            } finally {
                long end = System.nanoTime();
                board.applyEnded(end - start);
                PolicyDriver driver = switcher.driver();
                boolean held = driver != null && driver.heldBack();
                // What the driver held back goes once the stream stops: an apply (of nothing, if
                // nothing else comes) after the gather.
                ApplyQueue.AfterApply after = queue.finished(held);
                pacing.finished(start, end, held, after.more());
                if (after.postForHeld()) {
                    thread.post(this::drainOnThread, "apply held-back rewrites");
                }
            }
        } finally {
            queue.applied(taken.size());
        }
    }

    private void applyOnThread(List<DataplaneUpdate> batch, int batches, BooleanSupplier moreComing) {
        long start = System.nanoTime();
        long failuresBefore = board.failures();
        model.apply(batch);
        // The model holds the settings and InSync; the batch only says whether the settings just came.
        Duration interval = batch.stream().anyMatch(DataplaneUpdate.ConfigUpdate.class::isInstance)
                ? refreshIntervalOf(model.config()) : refresher.interval();
        ensureForwarding(model.config());
        updateMtu(); // before the routes: the tunnel devices take their MTU from it
        boolean resync = needResync.get();
        needResync.set(); // cleared only if both parts succeed
        PolicyDriver.ApplyStats stats = null;
        String error = null;
        try {
            stats = applyPolicy(batch, moreComing);
            PolicyDriver policy = switcher.driver();
            routes.holdDown(policy == null ? Set.of() : policy.heldDown());
            routes.update();
            if (resync) {
                routes.resync();
            }
            // Routes to other nodes wait for the whole snapshot (a partial one would remove routes);
            // the first time is a resync: a restarted felix finds its routes, devices and entries there.
            // A batch of policy or endpoints only (most of them) changes neither plan: no netlink dumps, no plan.
            if (model.inSync()) {
                for (RemoteRouteManager m : remoteRouteManagers()) {
                    if (resync || m.lastPlan().isEmpty()) {
                        m.resync();
                    } else if (batch.stream().anyMatch(RemoteRoutes::reads)) {
                        m.update();
                    }
                }
            }
            needResync.clear();
            // Its failures are recorded and retried on their own.
            boolean wireguardInputs = batch.stream().anyMatch(WireguardManager::reads);
            wireguard.apply(resync, wireguardInputs);
            wireguardV6.apply(resync, wireguardInputs);
            if (policy != null) {
                policy.problems().forEach(this::record); // unresolved until an apply leaves none
            }
            board.resolvedUpTo(failuresBefore); // failures during this batch (e.g. a sysctl) stay unresolved
        } catch (RuntimeException e) {
            error = "batch of " + batch.size() + " updates failed, next batch resyncs: " + e;
            record(error);
        }
        PolicyDriver driver = switcher.driver();
        if (driver != null) {
            board.programmed(driver.programmed());
        }
        board.pendingInterfaces(routes.pendingInterfaces());
        if (model.inSync()) {
            board.inSync();
        }
        refresher.every(interval);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        board.applied(new KernelApplyStatus(clock.instant(), took, batch.size(), batches, board.backend(), stats, error),
                stats != null && stats.resync());
        observer.applied(took, stats, board.programmed());
        refresher.settleLater();
    }

    /**
     * Applies the batch with the driver the current config chooses (see {@link BackendSwitcher});
     * {@return the driver's stats}, null when there is no driver.
     */
    private PolicyDriver.ApplyStats applyPolicy(List<DataplaneUpdate> batch, BooleanSupplier moreComing) {
        if (switcher.driver() == null && !model.hasConfig() && !model.inSync()) {
            // The graph holds the configuration back until in sync: starting a driver now would
            // pick the default backend and program it, only to switch on the first ConfigUpdate.
            // The model has the batch; the first driver starts from all of it.
            return null;
        }
        return switcher.apply(batch, moreComing, BackendChoice.Inputs.of(model.config()), () -> batch);
    }

    /**
     * The global forwarding sysctls, as Calico's felix sets them at start when
     * {@code ipForwarding} is Enabled (the default): IPv4, and IPv6 when {@code ipv6Support}.
     * Re-done only when those two settings change. Failures are recorded, never thrown.
     */
    private void ensureForwarding(FelixSettings config) {
        boolean enabled = config.ipForwarding();
        boolean v6 = config.ipv6Support();
        String key = enabled + "/" + v6;
        if (key.equals(forwardingApplied)) {
            return;
        }
        forwardingApplied = key;
        if (!enabled) {
            log.info("ipForwarding is Disabled: leaving the forwarding sysctls untouched");
            return;
        }
        try {
            sysctls.write("net/ipv4/ip_forward", "1");
        } catch (RuntimeException e) {
            forwardingApplied = null; // retried with the next batch
            record("cannot enable IPv4 forwarding (net.ipv4.ip_forward): " + e.getMessage());
        }
        if (v6) {
            try {
                sysctls.write("net/ipv6/conf/all/forwarding", "1");
            } catch (UncheckedIOException e) {
                if (e.getCause() instanceof NoSuchFileException) {
                    log.warn("IPv6 is not available here; net.ipv6.conf.all.forwarding not set");
                } else {
                    forwardingApplied = null;
                    record("cannot enable IPv6 forwarding (net.ipv6.conf.all.forwarding): " + e.getMessage());
                }
            } catch (RuntimeException e) {
                forwardingApplied = null;
                record("cannot enable IPv6 forwarding (net.ipv6.conf.all.forwarding): " + e.getMessage());
            }
        }
    }

    private static Duration refreshIntervalOf(FelixSettings settings) {
        Duration d = settings.iptablesRefreshInterval();
        return d.isNegative() || d.isZero() ? DEFAULT_REFRESH : d;
    }

    private void onLinksOnThread(List<LinkUpdate> updates) {
        for (LinkUpdate u : updates) {
            board.linkUpdate();
            if (u.deleted()) {
                wireguard.onLinkDeleted(u.name());
                wireguardV6.onLinkDeleted(u.name());
            }
            for (RemoteRouteManager m : remoteRouteManagers()) {
                if (u.name().equals(RemoteRoutes.vxlanDevice(m.family())) && model.inSync() && m.lastPlan().isPresent()) {
                    // Someone else changed Calico's VXLAN device (its own changes resync to nothing):
                    // rebuild it and its entries and routes now, not at the next refresh.
                    try {
                        m.resync();
                    } catch (RuntimeException e) {
                        record("link update " + u + ": " + e);
                    }
                }
            }
            // The policy driver first (one that attaches to interfaces polices a new one, or holds it down),
            // then the routes, which never set up what it holds down.
            PolicyDriver policy = switcher.driver();
            if (policy != null) {
                try {
                    policy.onLinkChange(u.name(), u.index(), u.deleted());
                    policy.problems().forEach(this::record);
                } catch (RuntimeException e) {
                    record("link update " + u + " (" + policy.name() + "): " + e);
                }
                routes.holdDown(policy.heldDown());
            }
            try {
                RouteManager.Stats st = routes.onLinkUpdate(u);
                if (st.routesAdded() > 0 || st.interfacesConfigured() > 0) {
                    log.info("Interface {} ({}): configured {}, {} route(s) added", u.name(),
                            u.deleted() ? "deleted" : u.up() ? "up" : "down", st.interfacesConfigured(),
                            st.routesAdded());
                }
            } catch (RuntimeException e) {
                record("link update " + u + ": " + e);
            }
        }
        board.pendingInterfaces(routes.pendingInterfaces());
        mtu.linksChanged(); // an MTU change is announced like any other link change
        updateMtuAndDevices();
    }

    /** {@return the routes to other nodes, one manager per family} */
    private List<RemoteRouteManager> remoteRouteManagers() {
        return List.of(remoteRoutes, remoteRoutesV6);
    }

    /** After links changed: a new host MTU changes the tunnel devices' MTUs in place at once. */
    private void updateMtuAndDevices() {
        int vxlanBefore = mtu.current().map(Mtus::vxlan).orElse(0);
        int ipipBefore = mtu.current().map(Mtus::ipip).orElse(0);
        int vxlanV6Before = mtu.current().map(Mtus::vxlanV6).orElse(0);
        int wireguardBefore = mtu.current().map(Mtus::wireguard).orElse(0);
        int wireguardV6Before = mtu.current().map(Mtus::wireguardV6).orElse(0);
        updateMtu();
        int vxlanNow = mtu.current().map(Mtus::vxlan).orElse(0);
        if (mtu.current().map(Mtus::wireguard).orElse(0) != wireguardBefore) {
            wireguard.apply(false, true); // records its own failures
        }
        if (mtu.current().map(Mtus::wireguardV6).orElse(0) != wireguardV6Before) {
            wireguardV6.apply(false, true);
        }
        int vxlanV6Now = mtu.current().map(Mtus::vxlanV6).orElse(0);
        if (mtu.current().map(Mtus::ipip).orElse(0) != ipipBefore) {
            updateVxlanMtu(remoteRoutes, -1, vxlanNow); // tunl0's MTU is the IPv4 manager's too
        } else {
            updateVxlanMtu(remoteRoutes, vxlanBefore, vxlanNow);
        }
        updateVxlanMtu(remoteRoutesV6, vxlanV6Before, vxlanV6Now);
    }

    /** A tunnel device's MTU changed with the host's (before != now): set it in place now. */
    private void updateVxlanMtu(RemoteRouteManager m, int before, int now) {
        if (now != before && model.inSync() && m.lastPlan().isPresent()) {
            try {
                m.update();
            } catch (RuntimeException e) {
                needResync.set();
                record(RemoteRoutes.vxlanDevice(m.family()) + " MTU " + now + ": " + e);
            }
        }
    }

    /**
     * The MTUs after the model or the links changed. A file that cannot be written is retried with
     * the next update; with {@code requireMTUFile} it is also recorded (felix not ready), as
     * Calico's felix then refuses to run.
     */
    private void updateMtu() {
        try {
            mtu.update(model);
            mtu.writeError().filter(e -> model.config().requireMtuFile())
                    .ifPresent(e -> record("MTU file (requireMTUFile): " + e));
        } catch (RuntimeException e) {
            record("MTU: " + e.getMessage());
        }
    }

    /**
     * {@return the MTUs felix computed} (host, per encapsulation, pod): empty until the first
     * configuration has been applied. The tunnel device managers take their MTU from here.
     */
    public Optional<Mtus> mtus() {
        return mtu.current();
    }

    /** Runs a refresh now, on the dataplane thread, and waits; {@return the items it repaired}. */
    public long refreshNow() {
        long before = board.repairs();
        thread.run(() -> refresher.refreshHere());
        return board.repairs() - before;
    }

    /** {@return the items periodic (or {@link #refreshNow}) refreshes have repaired since start}. */
    public long repairs() {
        return board.repairs();
    }

    /** {@return how many refreshes have completed}. */
    public long refreshes() {
        return board.refreshes();
    }

    /** {@return the refresh interval in force}. */
    public Duration refreshInterval() {
        return refresher.interval();
    }

    /** {@return the namespace programmed, empty for the process's own}. */
    public String netns() {
        return netns;
    }

    /** {@return the active policy driver's name} ({@code iptables-nft}, {@code iptables-legacy}, {@code nftables}), {@code none} before the first batch. */
    public String backend() {
        return board.backend();
    }

    /** {@return a point-in-time view} for the admin API. */
    public Status status() {
        ApplyQueue.Counts counts = queue.counts();
        return board.status(netns, counts.queued(), counts.handedOver(), refresher.interval());
    }

    @Override
    public boolean inSync() {
        return board.isInSync();
    }

    @Override
    public DataplaneModel model() {
        return model;
    }

    @Override
    public long applyRunningSince() {
        return board.applyRunningSince();
    }

    /**
     * {@return the unresolved problems}: failures since the last fully successful apply or
     * refresh, and a configured backend that cannot be started; empty once the dataplane has
     * recovered (felix's readiness follows this).
     */
    @Override
    public List<String> errors() {
        List<String> violations = model.errors(); // protocol violations: an upstream bug, never resolved
        if (violations.isEmpty()) {
            return board.errors();
        }
        List<String> out = new java.util.ArrayList<>(board.errors());
        out.addAll(violations);
        return List.copyOf(out);
    }

    /** {@return the last failures, resolved or not}, oldest first. */
    public List<String> recentErrors() {
        return board.recentErrors();
    }

    private void record(String error) {
        board.record(error);
    }

    @Override
    public void close() {
        queue.close();
        links.close();
        try {
            thread.run(() -> {
                refresher.stop();
                switcher.close(); // our rules stay in the kernel, as when felix restarts
                if (wireguardV6 != null) {
                    wireguardV6.close();
                }
                if (wireguard != null) {
                    wireguard.close();
                }
                if (netlink != null) {
                    netlink.close();
                }
            });
        } catch (RuntimeException e) {
            log.warn("Closing the kernel dataplane: {}", e.getMessage());
        }
        // The thread may have changed namespace for good: it dies with this object.
        thread.shutdownNow();
    }
}
