package calico.libcalico.ipam;

import java.util.List;

/**
 * What {@link IpamClient#check()} found: totals, and each inconsistency as one line naming the
 * resource and what is wrong (handle counts that disagree with the blocks, allocations whose
 * handle is gone, affinities without their block, affine blocks without their affinity).
 */
public record IpamCheckReport(int blocks, int handles, int allocations, List<String> problems) {
    public IpamCheckReport {
        problems = List.copyOf(problems);
    }

    public boolean ok() {
        return problems.isEmpty();
    }
}
