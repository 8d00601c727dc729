package calico.felix.dataplane.bpf;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.bpf.BpfFs;
import calico.dataplane.bpf.BpfMap;
import calico.dataplane.bpf.PolicyMaps;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.Tc;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.dataplane.PacketScenarios;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The shared packet scenarios on the eBPF driver (its own thread inside the host namespace, pins
 * on a private bpffs). The stranger's edits are map and tc edits: a drop is b's table entry
 * deleted from {@code cali_eps} (the program drops an endpoint direction without a table), the
 * forward hook is our filter detached from b's interface, a set is emptied by deleting its LPM
 * entries. What the driver cannot do yet is listed in {@link #missing()} with the reason (also in
 * felix-service/design/bpf-dataplane.md).
 */
class BpfPacketTest extends PacketScenarios {

    private Path bpffs;
    private BpfDataplane dp;
    private DataplaneModel model;

    @Override
    protected void assumeAvailable() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
    }

    @Override
    protected String prefix() {
        return "bpf-";
    }

    @Override
    protected Map<Feature, String> missing() {
        return Map.of(
                Feature.IPV6, "the programs drop IPv6 on workload interfaces (no v6 sets, rules or conntrack yet)",
                Feature.POLICY_AFTER_HOST_DNAT, "host endpoint programs run at tc, before the host's netfilter DNAT: "
                        + "as in Calico's eBPF mode, arriving traffic is judged by the destination it arrived with",
                Feature.NAT_OUTGOING, "no masquerade: the netfilter nat chains go with the netfilter drivers",
                Feature.HOST_INPUT_FILTER, "the host's own input (VXLAN from non-Calico hosts) is not policed");
    }

    @Override
    protected String ourMarker() {
        return "cali"; // our programs are calico_to_ep / calico_from_ep, our pins cali_*
    }

    @Override
    protected Driver driver() {
        try {
            bpffs = Files.createTempDirectory("bpf-fs-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        NamespaceThread thread = new NamespaceThread(host);
        model = new DataplaneModel();
        dp = new BpfDataplane(model, bpffs);
        return onThread(thread, model, dp, () -> {
            dp.close();
            if (BpfFs.isBpfFs(bpffs)) {
                BpfFs.unmount(bpffs);
            }
            try {
                Files.deleteIfExists(bpffs);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** A stranger with the pinned set map, opened by path. */
    private <T> T withSets(java.util.function.Function<BpfMap, T> body) {
        return BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.SETS), 12, 1, body);
    }

    private int ifindex(String iface) {
        return Integer.parseInt(host.exec("cat", "/sys/class/net/" + iface + "/ifindex").strip());
    }

    @Override
    protected void strangerDrop(String chain, IpFamily family) {
        // the chain is cali-tw-<iface>: that endpoint's ingress table entry goes
        String iface = chain.substring(Names.toWorkload("").length());
        int index = ifindex(iface);
        BpfMap.withPinned(dp.pinDir().resolve(PolicyMaps.ENDPOINTS), 8, 8,
                m -> m.delete(PolicyMaps.endpointKey(index, Dir.TO_ENDPOINT)));
    }

    @Override
    protected void cutForwardHook() {
        host.exec("tc", "filter", "del", "dev", B_IF, "egress", "pref", Integer.toString(Tc.PRIORITY), "handle",
                "0x" + Integer.toHexString(Tc.HANDLE), "bpf");
    }

    /** {@return the BPF set ID behind a kernel set name of the netfilter drivers} */
    private int setId(String kernelName) {
        String graphId = model.ipSets().keySet().stream()
                .filter(id -> Names.ipSet(IpFamily.V4, id).equals(kernelName)).findFirst()
                .orElseThrow(() -> new AssertionError("no IPv4 set " + kernelName));
        Integer id = dp.setId(graphId);
        if (id == null) {
            throw new AssertionError("set " + graphId + " is not programmed");
        }
        return id;
    }

    @Override
    protected void emptySet(String name) {
        int id = setId(name);
        withSets(sets -> {
            sets.keys().stream().filter(k -> PolicyMaps.decodeLpmKey(k).setId() == id).forEach(sets::delete);
            return null;
        });
    }

    @Override
    protected String listSet(String name) {
        int id = setId(name);
        return withSets(sets -> sets.keys().stream().map(PolicyMaps::decodeLpmKey)
                .filter(e -> e.setId() == id).map(e -> e.address().getHostAddress() + "/" + e.prefix())
                .collect(Collectors.joining("\n")));
    }

    @Override
    protected String listOurs() {
        String filters = Stream.of(A_IF, B_IF, "up0").flatMap(i -> Stream.of("ingress", "egress")
                .map(hook -> host.exec("tc", "filter", "show", "dev", i, hook))).collect(Collectors.joining());
        String[] pins = dp.pinDir().toFile().list();
        return filters + (pins == null ? "" : String.join("\n", Arrays.asList(pins)));
    }

    /** The host's own nat rule, in an nftables table of the host's (the BPF driver programs nothing in netfilter). */
    @Override
    protected void dnat(boolean prerouting, String ip, int port, String toIp, int toPort) {
        String hook = prerouting ? "prerouting" : "output";
        host.exec("nft", "add", "table", "ip", "hostnat");
        host.exec("nft", "add", "chain", "ip", "hostnat", hook, "{ type nat hook " + hook + " priority -100 ; }");
        host.exec("nft", "add", "rule", "ip", "hostnat", hook, "ip", "daddr", ip, "tcp", "dport",
                Integer.toString(port), "dnat", "to", toIp + ":" + toPort);
    }
}
