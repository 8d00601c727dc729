package calico.felix.calc;

import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.SyncerStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The graph's output stage: buffers what the other stages report, coalesces it by key, and on
 * {@link #flush()} emits one batch in an order the dataplane can apply as it comes.
 *
 * <p>Each kind has a pending-updates / pending-removes / sent trio: an update cancels a pending
 * remove; a remove cancels a pending update and is sent only for something already sent.
 * Protocol violations (a member change for an IP set that was never added) throw: they are bugs
 * in an upstream stage, not bad input.
 */
final class EventSequencer implements IpSetMemberCalculator.IpSetListener, ActiveRulesCalculator.RuleListener,
        PolicyResolver.EndpointListener, InfraListener, FlowLookupStage.LookupListener {

    /**
     * Pending updates, pending removes and what the dataplane has, for one kind. With
     * {@code dedupe}, an update equal to what was last sent is dropped at flush (a value that
     * changed and changed back within one batch); IP sets cannot dedupe as deltas follow them.
     */
    private static final class Trio<K, V extends DataplaneUpdate> {
        final boolean dedupe;
        final Map<K, V> pendingUpdates = new LinkedHashMap<>();
        final Set<K> pendingRemoves = new LinkedHashSet<>();
        final Map<K, V> sent = new HashMap<>();

        Trio(boolean dedupe) {
            this.dedupe = dedupe;
        }

        void update(K k, V v) {
            pendingRemoves.remove(k);
            pendingUpdates.put(k, v);
        }

        void remove(K k) {
            pendingUpdates.remove(k);
            if (sent.containsKey(k)) {
                pendingRemoves.add(k);
            }
        }

        boolean isSent(K k) {
            return sent.containsKey(k);
        }

        void flushUpdates(List<DataplaneUpdate> out) {
            pendingUpdates.forEach((k, v) -> {
                V old = sent.put(k, dedupe ? v : null);
                if (!dedupe || !v.equals(old)) {
                    out.add(v);
                }
            });
            pendingUpdates.clear();
        }

        void flushRemoves(List<DataplaneUpdate> out, Function<K, DataplaneUpdate> removal) {
            for (K k : pendingRemoves) {
                out.add(removal.apply(k));
                sent.remove(k);
            }
            pendingRemoves.clear();
        }
    }

    /** A member delta being accumulated for a set the dataplane already has. */
    private record Delta(Set<IpSetMember> added, Set<IpSetMember> removed) {
    }

    private final Consumer<List<DataplaneUpdate>> out;

    /** IP sets: a pending update is a full (re)write, accumulated member by member. */
    private final Trio<String, DataplaneUpdate.IpSetUpdate> ipSets = new Trio<>(false);
    private final Map<String, Set<IpSetMember>> pendingMembers = new HashMap<>();
    private final Map<String, Delta> pendingDeltas = new LinkedHashMap<>();
    private final Trio<PolicyId, DataplaneUpdate.ActivePolicyUpdate> policies = new Trio<>(true);
    private final Trio<String, DataplaneUpdate.ActiveProfileUpdate> profiles = new Trio<>(true);
    private final Trio<String, DataplaneUpdate.WorkloadEndpointUpdate> workloads = new Trio<>(true);
    private final Trio<String, DataplaneUpdate.HostEndpointUpdate> hostEndpoints = new Trio<>(true);
    private DataplaneUpdate.ConfigUpdate pendingConfig;
    /** The service ranges to guard, when they changed since the last flush (one value, replaced whole). */
    private DataplaneUpdate.ServiceCidrsUpdate pendingServiceCidrs;
    private final Trio<String, DataplaneUpdate> hosts = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> pools = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> routes = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> wireguard = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> wireguardV6 = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> vteps = new Trio<>(true);
    private final Trio<String, DataplaneUpdate> ipipTunnel = new Trio<>(true);
    private final Trio<String, DataplaneUpdate.FlowLookup> lookups = new Trio<>(true);
    private boolean inSyncPending;
    private boolean inSyncSent;

    EventSequencer(Consumer<List<DataplaneUpdate>> out) {
        this.out = out;
    }

    // ---- IP sets ----

    @Override
    public void onIpSetAdded(String id, IpSetType type) {
        pendingDeltas.remove(id);
        Set<IpSetMember> members = new HashSet<>();
        pendingMembers.put(id, members);
        ipSets.update(id, new DataplaneUpdate.IpSetUpdate(id, type, Set.of()));
    }

    @Override
    public void onMemberAdded(String id, IpSetMember m) {
        Set<IpSetMember> full = pendingMembers.get(id);
        if (full != null) {
            full.add(m);
            return;
        }
        Delta d = delta(id);
        if (!d.removed().remove(m)) {
            d.added().add(m);
        }
    }

    @Override
    public void onMemberRemoved(String id, IpSetMember m) {
        Set<IpSetMember> full = pendingMembers.get(id);
        if (full != null) {
            full.remove(m);
            return;
        }
        Delta d = delta(id);
        if (!d.added().remove(m)) {
            d.removed().add(m);
        }
    }

    private Delta delta(String id) {
        if (!ipSets.isSent(id) || ipSets.pendingRemoves.contains(id)) {
            throw new IllegalStateException("member change for unknown IP set " + id);
        }
        return pendingDeltas.computeIfAbsent(id, x -> new Delta(new HashSet<>(), new HashSet<>()));
    }

    @Override
    public void onIpSetRemoved(String id) {
        pendingMembers.remove(id);
        pendingDeltas.remove(id);
        ipSets.remove(id);
    }

    // ---- Policies and profiles ----

    @Override
    public void onPolicyActive(PolicyId id, CompiledPolicy policy) {
        policies.update(id, new DataplaneUpdate.ActivePolicyUpdate(id, policy));
    }

    @Override
    public void onPolicyInactive(PolicyId id) {
        policies.remove(id);
    }

    @Override
    public void onProfileActive(String name, CompiledPolicy profile) {
        profiles.update(name, new DataplaneUpdate.ActiveProfileUpdate(name, profile));
    }

    @Override
    public void onProfileInactive(String name) {
        profiles.remove(name);
    }

    // ---- Endpoints ----

    @Override
    public void onEndpointUpdate(DataplaneUpdate u) {
        if (u instanceof DataplaneUpdate.WorkloadEndpointUpdate w) {
            workloads.update(w.id(), w);
        } else if (u instanceof DataplaneUpdate.HostEndpointUpdate h) {
            hostEndpoints.update(h.id(), h);
        } else {
            throw new IllegalArgumentException("not an endpoint update: " + u);
        }
    }

    @Override
    public void onEndpointRemove(ResourceKey key) {
        if (key.kind() == ResourceKind.WORKLOAD_ENDPOINT) {
            workloads.remove(key.namespace() + "/" + key.name());
        } else {
            hostEndpoints.remove(key.name());
        }
    }

    // ---- Infrastructure (config, hosts, pools, routes) ----

    @Override
    public void onInfraUpdate(DataplaneUpdate u) {
        if (u instanceof DataplaneUpdate.ConfigUpdate c) {
            pendingConfig = c;
        } else if (u instanceof DataplaneUpdate.HostMetadataUpdate h) {
            hosts.update(h.hostname(), h);
        } else if (u instanceof DataplaneUpdate.HostMetadataRemove h) {
            hosts.remove(h.hostname());
        } else if (u instanceof DataplaneUpdate.IpPoolUpdate p) {
            pools.update(p.name(), p);
        } else if (u instanceof DataplaneUpdate.IpPoolRemove p) {
            pools.remove(p.name());
        } else if (u instanceof DataplaneUpdate.RouteUpdate r) {
            routes.update(r.dst(), r);
        } else if (u instanceof DataplaneUpdate.RouteRemove r) {
            routes.remove(r.dst());
        } else if (u instanceof DataplaneUpdate.WireguardEndpointUpdate w) {
            wireguard.update(w.hostname(), w);
        } else if (u instanceof DataplaneUpdate.WireguardEndpointRemove w) {
            wireguard.remove(w.hostname());
        } else if (u instanceof DataplaneUpdate.WireguardEndpointV6Update w) {
            wireguardV6.update(w.hostname(), w);
        } else if (u instanceof DataplaneUpdate.WireguardEndpointV6Remove w) {
            wireguardV6.remove(w.hostname());
        } else if (u instanceof DataplaneUpdate.VtepUpdate v) {
            vteps.update(v.node(), v);
        } else if (u instanceof DataplaneUpdate.VtepRemove v) {
            vteps.remove(v.node());
        } else if (u instanceof DataplaneUpdate.IpipTunnelAddressUpdate t) {
            ipipTunnel.update(t.node(), t);
        } else if (u instanceof DataplaneUpdate.IpipTunnelAddressRemove t) {
            ipipTunnel.remove(t.node());
        } else if (u instanceof DataplaneUpdate.ServiceCidrsUpdate c) {
            pendingServiceCidrs = c;
        } else {
            throw new IllegalArgumentException("not an infrastructure update: " + u);
        }
    }

    // ---- Flow-log lookups (never programmed) ----

    @Override
    public void onLookupUpdate(DataplaneUpdate.FlowLookup u) {
        lookups.update(u.key(), u);
    }

    @Override
    public void onLookupRemove(String key) {
        lookups.remove(key);
    }

    void onStatus(SyncerStatus status) {
        if (status == SyncerStatus.IN_SYNC && !inSyncSent) {
            inSyncPending = true;
        }
    }

    /** Emits everything pending as one batch, in the order below; nothing if nothing is pending. */
    void flush() {
        List<DataplaneUpdate> batch = new ArrayList<>();
        // 1. Config first: it can change how everything after it is programmed.
        if (pendingConfig != null) {
            batch.add(pendingConfig);
            pendingConfig = null;
        }
        // 1b. The service ranges to guard: like config, they refer to nothing and change how rules read.
        if (pendingServiceCidrs != null) {
            batch.add(pendingServiceCidrs);
            pendingServiceCidrs = null;
        }
        // 2. IP set creations/rewrites and deltas, before any rule that may refer to them.
        for (String id : ipSets.pendingUpdates.keySet()) {
            DataplaneUpdate.IpSetUpdate u = ipSets.pendingUpdates.get(id);
            ipSets.pendingUpdates.put(id, new DataplaneUpdate.IpSetUpdate(id, u.type(), pendingMembers.remove(id)));
        }
        ipSets.flushUpdates(batch);
        pendingDeltas.forEach((id, d) -> {
            if (!d.added().isEmpty() || !d.removed().isEmpty()) {
                batch.add(new DataplaneUpdate.IpSetDeltaUpdate(id, d.added(), d.removed()));
            }
        });
        pendingDeltas.clear();
        // 3. Policies, then 4. profiles: they refer only to IP sets, all present now.
        policies.flushUpdates(batch);
        profiles.flushUpdates(batch);
        // 5. Endpoints: they refer to policies and profiles, all present now.
        workloads.flushUpdates(batch);
        hostEndpoints.flushUpdates(batch);
        // 6. Infrastructure additions: independent of the above.
        hosts.flushUpdates(batch);
        pools.flushUpdates(batch);
        vteps.flushUpdates(batch); // before the routes that go through them
        ipipTunnel.flushUpdates(batch); // tunl0's address, like a VTEP, before the routes
        routes.flushUpdates(batch);
        wireguard.flushUpdates(batch);
        wireguardV6.flushUpdates(batch);
        // Flow-log lookups: no dataplane state depends on them or they on it.
        lookups.flushUpdates(batch);
        lookups.flushRemoves(batch, DataplaneUpdate.FlowLookupRemove::new);
        // Removals in reverse: routes before pools and hosts they may rely on; endpoints before
        // the policies and profiles they referred to; those before the IP sets their rules used.
        routes.flushRemoves(batch, DataplaneUpdate.RouteRemove::new);
        wireguard.flushRemoves(batch, DataplaneUpdate.WireguardEndpointRemove::new);
        wireguardV6.flushRemoves(batch, DataplaneUpdate.WireguardEndpointV6Remove::new);
        vteps.flushRemoves(batch, DataplaneUpdate.VtepRemove::new);
        ipipTunnel.flushRemoves(batch, DataplaneUpdate.IpipTunnelAddressRemove::new);
        pools.flushRemoves(batch, DataplaneUpdate.IpPoolRemove::new);
        hosts.flushRemoves(batch, DataplaneUpdate.HostMetadataRemove::new);
        hostEndpoints.flushRemoves(batch, DataplaneUpdate.HostEndpointRemove::new);
        workloads.flushRemoves(batch, DataplaneUpdate.WorkloadEndpointRemove::new);
        profiles.flushRemoves(batch, DataplaneUpdate.ActiveProfileRemove::new);
        policies.flushRemoves(batch, DataplaneUpdate.ActivePolicyRemove::new);
        ipSets.flushRemoves(batch, DataplaneUpdate.IpSetRemove::new);
        // 7. InSync last: the snapshot is complete only once all of it is out.
        if (inSyncPending) {
            batch.add(new DataplaneUpdate.InSync());
            inSyncPending = false;
            inSyncSent = true;
        }
        if (!batch.isEmpty()) {
            out.accept(List.copyOf(batch));
        }
    }
}
