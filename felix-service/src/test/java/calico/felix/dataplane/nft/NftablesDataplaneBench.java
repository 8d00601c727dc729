package calico.felix.dataplane.nft;

import static calico.felix.dataplane.testing.Fixtures.foldAndApply;

import calico.api.model.Action;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.dataplane.nft.Nftables;
import calico.dataplane.testing.NamespaceThread;
import calico.dataplane.testing.NetNs;
import calico.felix.calc.CompiledPolicy;
import calico.felix.calc.CompiledRule;
import calico.felix.calc.CompiledRule.Side;
import calico.felix.calc.DataplaneUpdate;
import calico.felix.calc.IpSetMember;
import calico.felix.calc.IpSetType;
import calico.felix.calc.PolicyId;
import calico.felix.calc.TierPolicies;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Prints the nftables driver's apply times in throwaway namespaces: 2,000 policies over 500
 * endpoints (4 policies per endpoint in one tier, each allowing TCP 80 from its own 20-address
 * IP set and egress to a net), a shared profile. Figures: the first apply (one transaction
 * recreating the table, plus the listing refresh compares with), the median of 50 single-policy
 * changes, the medians of 50 one-address set additions and removals, two clean refreshes, a second resync with a
 * warm JVM, and the kernel floor:
 * {@code nft -f} of the same final ruleset (as {@code nft list ruleset} printed it) into a fresh
 * namespace. {@code NFT_BENCH_KEEP=FILE} keeps that ruleset. Run:
 * {@code bench/run.sh felix-service calico.felix.dataplane.nft.NftablesDataplaneBench [policies endpoints [netlink]]}
 * ({@code netlink}: batches libnftables need not parse go as our own netlink messages, {@code Nftables.open(true)})
 */
public final class NftablesDataplaneBench {

    public static void main(String[] args) throws Exception {
        int policies = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        boolean netlink = args.length > 2 && args[2].equals("netlink");
        try (NetNs ns = NetNs.create("nftdpbench"); NetNs fresh = NetNs.create("nftdpfloor");
                NetNs freshJson = NetNs.create("nftdpjson"); NamespaceThread thread = new NamespaceThread(ns)) {
            Nftables nft = thread.call(() -> Nftables.open(netlink));
            DataplaneModel model = new DataplaneModel();
            NftablesDataplane dp = new NftablesDataplane(nft, model);
            List<DataplaneUpdate> batch = initial(policies, endpoints);

            long t0 = System.nanoTime();
            thread.call(() -> foldAndApply(model, dp, batch));
            double first = ms(t0);
            PolicyDriver.Programmed p = thread.call(dp::programmed);

            double[] change = new double[50];
            for (int i = 0; i < change.length; i++) {
                int port = 81 + i;
                int which = i * 37 % policies;
                long t = System.nanoTime();
                PolicyDriver.ApplyStats s = thread.call(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.ActivePolicyUpdate(
                        id(which), policy("s:" + which, port)))));
                change[i] = ms(t);
                if (s.resync() || s.chainsWritten() != 1) {
                    throw new IllegalStateException("a policy change should rewrite one chain, got " + s);
                }
            }
            double[] delta = new double[50];
            for (int i = 0; i < delta.length; i++) {
                int n = i;
                long t = System.nanoTime();
                thread.call(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:" + n,
                        Set.of(IpSetMember.net(Cidr.parse("10.99.0." + n + "/32"))), Set.of()))));
                delta[i] = ms(t);
            }
            double[] removed = new double[50];
            for (int i = 0; i < removed.length; i++) {
                int n = i;
                long t = System.nanoTime();
                thread.call(() -> foldAndApply(model, dp, List.of(new DataplaneUpdate.IpSetDeltaUpdate("s:" + n, Set.of(),
                        Set.of(IpSetMember.net(Cidr.parse("10.99.0." + n + "/32")))))));
                removed[i] = ms(t);
            }
            long tr = System.nanoTime();
            int repaired = thread.call(dp::refresh);
            double refresh = ms(tr);
            long tr2 = System.nanoTime();
            int repaired2 = thread.call(dp::refresh);
            double refresh2 = ms(tr2);
            long tw = System.nanoTime();
            thread.call(dp::resync);
            double warmResync = ms(tw);

            // The kernel's floor: the same final ruleset from a file, by nft itself, into an empty namespace.
            Path file = Files.createTempFile("nftdpbench", ".nft");
            Path json = Files.createTempFile("nftdpbench", ".json");
            try {
                Files.writeString(file, ns.exec("nft", "list", "ruleset"));
                String keep = System.getenv("NFT_BENCH_KEEP");
                if (keep != null) {
                    // For measuring one change by hand (nft, strace, perf) on a table of this shape.
                    Files.copy(file, Path.of(keep), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
                long tf = System.nanoTime();
                fresh.exec("nft", "-f", file.toString());
                double floor = ms(tf);
                // Our own resync transaction, as JSON, by the nft tool: libnftables' JSON path without the JVM.
                Files.writeString(json, NftChangePlanner.fullBatch(dp.desired()).toString());
                long tj = System.nanoTime();
                freshJson.exec("nft", "-j", "-f", json.toString());
                double ourJson = ms(tj);
                System.out.printf("%s: %d batches sent as our netlink messages%n",
                        netlink ? "netlink where it can" : "libnftables only", thread.call(nft::netlinkBatches));
                System.out.printf("policies=%d endpoints=%d: %d chains, %d rules, %d sets, %d set members (file %d KiB)%n",
                        policies, endpoints, p.chains(), p.rules(), p.sets(), p.setMembers(), Files.size(file) / 1024);
                System.out.printf("first apply (resync)        %8.1f ms%n", first);
                System.out.printf("nft -f same ruleset (floor) %8.1f ms   ratio %.2f%n", floor, first / floor);
                System.out.printf("nft -j -f our resync JSON   %8.1f ms%n", ourJson);
                System.out.printf("one policy change           median %6.1f ms  (min %.1f, max %.1f, n=50)%n",
                        median(change), min(change), max(change));
                System.out.printf("one set member added        median %6.1f ms  (min %.1f, max %.1f, n=50)%n",
                        median(delta), min(delta), max(delta));
                System.out.printf("one set member removed      median %6.1f ms  (min %.1f, max %.1f, n=50)%n",
                        median(removed), min(removed), max(removed));
                System.out.printf("refresh, nothing to repair  %8.1f ms  (repaired %d; first after writes: verifies them)%n",
                        refresh, repaired);
                System.out.printf("refresh again               %8.1f ms  (repaired %d)%n", refresh2, repaired2);
                System.out.printf("resync again (warm JVM)     %8.1f ms%n", warmResync);
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(json);
                thread.run(nft::close);
            }
        }
    }

    private static List<DataplaneUpdate> initial(int policies, int endpoints) {
        List<DataplaneUpdate> batch = new ArrayList<>();
        batch.add(new DataplaneUpdate.ActiveProfileUpdate("kns.bench", new CompiledPolicy(
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)),
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, Side.ANY, null)), false)));
        List<List<PolicyId>> perEndpoint = new ArrayList<>();
        for (int e = 0; e < endpoints; e++) {
            perEndpoint.add(new ArrayList<>());
        }
        for (int i = 0; i < policies; i++) {
            Set<IpSetMember> members = new HashSet<>();
            for (int m = 0; m < 20; m++) {
                members.add(IpSetMember.net(Cidr.parse("10." + (i / 256) + "." + (i % 256) + "." + m + "/32")));
            }
            batch.add(new DataplaneUpdate.IpSetUpdate("s:" + i, IpSetType.NET, members));
            batch.add(new DataplaneUpdate.ActivePolicyUpdate(id(i), policy("s:" + i, 80)));
            perEndpoint.get(i % endpoints).add(id(i));
        }
        for (int e = 0; e < endpoints; e++) {
            batch.add(new DataplaneUpdate.WorkloadEndpointUpdate("bench/w" + e, "calib" + e, null,
                    List.of("10.200." + (e / 256) + "." + (e % 256) + "/32"), List.of(), List.of("kns.bench"),
                    List.of(new TierPolicies("default", Action.Deny, perEndpoint.get(e), false)),
                    List.of(new TierPolicies("default", Action.Deny, perEndpoint.get(e), false))));
        }
        return batch;
    }

    private static PolicyId id(int i) {
        return new PolicyId("default", null, "p" + i, ResourceKind.GLOBAL_NETWORK_POLICY);
    }

    /** Ingress: allow TCP {@code port} from the set; egress: allow to 10.0.0.0/8. */
    private static CompiledPolicy policy(String set, int port) {
        Side src = new Side(List.of(), List.of(), List.of(), List.of(), List.of(set), List.of(), List.of(), List.of());
        Side dst = new Side(List.of(), List.of(), List.of(String.valueOf(port)), List.of(), List.of(), List.of(),
                List.of(), List.of());
        Side nets = new Side(List.of("10.0.0.0/8"), List.of(), List.of(), List.of(), List.of(), List.of(), List.of(),
                List.of());
        return new CompiledPolicy(List.of(new CompiledRule(Action.Allow, null, "TCP", null, null, null, src, dst, null)),
                List.of(new CompiledRule(Action.Allow, null, null, null, null, null, Side.ANY, nets, null)), false);
    }

    private static double ms(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(0);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(0);
    }
}
