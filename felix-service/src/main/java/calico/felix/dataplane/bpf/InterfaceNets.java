package calico.felix.dataplane.bpf;

import calico.api.net.Cidr;
import calico.dataplane.bpf.BpfMap;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.netlink.Link;
import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.dataplane.rules.DataplaneModel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What {@code cali_ifnets} holds ({@link PolicyMaps#IFNETS}), kept equal to the model: under
 * {@code workloadSourceSpoofing: Any}, each workload interface's {@code allowSpoofedSourcePrefixes}
 * (the programs' reverse-path check lets those sources through from that interface only, as
 * Calico's {@code cali-rpf-skip}); unless {@code serviceLoopPrevention} is {@code Disabled}, the
 * service ranges under interface 0. {@link #flags} gives the {@code cali_cfg} bits that go with them.
 */
final class InterfaceNets {

    /** The keys the map holds (ByteBuffer: content equality). */
    private final Set<ByteBuffer> held = new HashSet<>();

    /** {@return the {@code cali_cfg} flags of {@code serviceLoopPrevention}}: none while no range is guarded */
    static int flags(DataplaneModel model) {
        String mode = model.config().serviceLoopPrevention();
        if (model.serviceCidrs().isEmpty() || "Disabled".equals(mode)) {
            return 0;
        }
        return PolicyMaps.CFG_SVC_LOOP | ("Reject".equals(mode) ? PolicyMaps.CFG_SVC_REJECT : 0);
    }

    /**
     * Brings {@code map} to what the model says for the workload interfaces {@code links} (by name):
     * new keys added, then keys no longer wanted removed; {@code full}: the map's keys read back
     * first (a resync: a restart or a failure).
     */
    void sync(BpfMap map, DataplaneModel model, Map<String, Link> links, boolean full) {
        if (full) {
            held.clear();
            map.keys().forEach(k -> held.add(ByteBuffer.wrap(k)));
        }
        Set<ByteBuffer> want = new HashSet<>();
        if (flags(model) != 0) {
            model.serviceCidrs().forEach(c -> want.add(key(PolicyMaps.IFNETS_SERVICES, c)));
        }
        if (model.config().workloadSourceSpoofing()) {
            for (WorkloadEndpointUpdate w : model.workloads().values()) {
                Link l = w.interfaceName() == null ? null : links.get(w.interfaceName());
                for (String c : l == null ? List.<String>of() : w.allowSpoofedSourcePrefixes()) {
                    try {
                        want.add(key(l.index(), c));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("workload endpoint " + w.id()
                                + ": allowSpoofedSourcePrefixes: \"" + c + "\" is not a CIDR: " + e.getMessage(), e);
                    }
                }
            }
        }
        List<byte[]> added = new ArrayList<>();
        want.stream().filter(k -> !held.contains(k)).forEach(k -> added.add(k.array()));
        List<byte[]> gone = new ArrayList<>();
        held.stream().filter(k -> !want.contains(k)).forEach(k -> gone.add(k.array()));
        added.forEach(k -> map.put(k, ONE)); // an LPM trie: no batch
        gone.forEach(map::delete);
        held.clear();
        held.addAll(want);
    }

    /**
     * Puts back the keys a stranger removed from {@code map} and removes the ones it added (an added
     * key would let a spoofed source through); {@return whether anything was repaired}
     */
    boolean restore(BpfMap map) {
        Set<ByteBuffer> present = new HashSet<>();
        map.keys().forEach(k -> present.add(ByteBuffer.wrap(k)));
        boolean repaired = false;
        for (ByteBuffer k : held) {
            if (!present.contains(k)) {
                map.put(k.array(), ONE);
                repaired = true;
            }
        }
        for (ByteBuffer k : present) {
            if (!held.contains(k)) {
                map.delete(k.array());
                repaired = true;
            }
        }
        return repaired;
    }

    private static final byte[] ONE = {1};

    private static ByteBuffer key(int ifindex, String cidr) {
        Cidr c = Cidr.parse(cidr);
        return ByteBuffer.wrap(PolicyMaps.ifnetKey(ifindex, BpfDataplane.inet(c), c.prefixLength()));
    }
}
