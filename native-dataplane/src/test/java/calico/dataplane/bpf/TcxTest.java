package calico.dataplane.bpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.bpf.PolicyMaps.Action;
import calico.dataplane.bpf.PolicyMaps.Dir;
import calico.dataplane.bpf.PolicyMaps.Rule;
import calico.dataplane.testing.NetNs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * tcx links on this kernel (6.6 and later): the shipped programs attached as pinned links decide
 * real packets with no qdisc; a second attach replaces the program in place (still one program on
 * the hook); the pin outlives the loader; removing the pin detaches. Same namespaces as
 * {@link PolicyProgramTest}.
 */
class TcxTest {

    private static final String A = "10.78.1.2";
    private static final String B = "10.78.2.2";

    private NetNs router;
    private NetNs a;
    private NetNs b;
    private Path bpffs;

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(NetNs.available(), "needs root for namespaces");
        bpffs = Files.createTempDirectory("bpf-fs-");
        BpfFs.ensureMounted(bpffs);
        router = NetNs.create("tcx-r");
        a = NetNs.create("tcx-a");
        b = NetNs.create("tcx-b");
        PolicyProgramTest.wire(router, a, b, "10.78");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (NetNs n : new NetNs[] {a, b, router}) {
            if (n != null) {
                n.close();
            }
        }
        if (bpffs != null) {
            if (BpfFs.isBpfFs(bpffs)) {
                BpfFs.unmount(bpffs);
            }
            Files.deleteIfExists(bpffs);
        }
    }

    @Test
    void pinnedLinksPoliceReplaceInPlaceAndDetachWithTheirPin() throws Exception {
        assumeTrue(router.call(Tcx::available), "kernel without tcx");
        Path pins = bpffs.resolve("calico");
        int ifB = Integer.parseInt(router.exec("cat", "/sys/class/net/calibbbb/ifindex").strip());
        Path egress = PolicyProgram.linkPin(pins, "calibbbb", TcDirection.EGRESS);
        try (NetNs.Listener b8080 = b.tcpListener(B, 8080)) {
            try (PolicyProgram prog = router.call(() -> PolicyProgram.load(pins))) {
                router.run(() -> {
                    for (Dir d : Dir.WORKLOAD) {
                        prog.attachTcx(ifB, "calibbbb", d);
                    }
                });
                assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
                assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.INGRESS)))
                        .containsExactly("calico_from_ep");
                assertThat(router.exec("tc", "qdisc", "show", "dev", "calibbbb")).doesNotContain("clsact");
                assertThat(egress).exists();
                assertThat(a.tcpConnects(B, 8080, Duration.ofMillis(300))).as("no table: dropped").isFalse();
                BpfMap rules = prog.map(PolicyMaps.RULES);
                rules.put(PolicyMaps.ruleKey(ifB, Dir.TO_ENDPOINT, 1, 0), PolicyMaps.rule(Rule.always(Action.ALLOW, 0)));
                rules.put(PolicyMaps.ruleKey(ifB, Dir.FROM_ENDPOINT, 1, 0), PolicyMaps.rule(Rule.always(Action.ALLOW, 0)));
                prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifB, Dir.TO_ENDPOINT), PolicyMaps.endpointValue(1, 1));
                prog.map(PolicyMaps.ENDPOINTS).put(PolicyMaps.endpointKey(ifB, Dir.FROM_ENDPOINT),
                        PolicyMaps.endpointValue(1, 1));
                assertThat(a.tcpConnects(B, 8080, Duration.ofSeconds(2))).as("allowed by b's tables").isTrue();
            }
            // The loader is gone; the pinned links keep the programs on the hooks.
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.EGRESS))).containsExactly("calico_to_ep");
            List<Integer> before = router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS));
            try (PolicyProgram again = router.call(() -> PolicyProgram.load(pins))) {
                router.run(() -> again.attachTcx(ifB, "calibbbb", Dir.TO_ENDPOINT));
                List<Integer> after = router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS));
                assertThat(after).as("replaced in the link: one program, a new one").hasSize(1)
                        .doesNotContainAnyElementsOf(before);
                assertThat(router.call(() -> Tcx.attachedProgramId(egress, ifB))).hasValue(after.get(0));
                assertThat(a.tcpConnects(B, 8080, Duration.ofSeconds(2))).isTrue();
            }
            assertThat(Tcx.detach(egress)).isTrue();
            // the kernel releases the link after the pin's last reference goes (a deferred work item)
            PolicyProgramTest.await("unpinned: detached",
                    () -> router.call(() -> Tcx.programIds(ifB, TcDirection.EGRESS)).isEmpty());
            assertThat(router.call(() -> Tcx.programNames(ifB, TcDirection.INGRESS))).as("the other hook keeps its link")
                    .containsExactly("calico_from_ep");
            assertThat(router.call(() -> Tcx.attachedProgramId(egress, ifB))).isEmpty();
        }
    }
}
