package calico.goldmane.query;

import calico.goldmane.engine.ScanTask;
import calico.goldmane.store.KeyEntry;
import calico.libcalico.goldmane.proto.FilterHint;
import calico.libcalico.goldmane.proto.FilterHintsResult;
import calico.libcalico.goldmane.proto.FilterType;
import calico.libcalico.goldmane.proto.FlowKey;
import calico.libcalico.goldmane.proto.PolicyHit;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/** FilterHints: the distinct, non-empty values of one field among matching flows in range, sorted. */
public final class HintsScan implements ScanTask<FilterHintsResult> {

    private final FilterType type;
    private final BucketRange range;
    private final FlowFilter filter;
    private final Paging paging;
    private final TreeSet<String> values = new TreeSet<>();

    HintsScan(FilterType type, BucketRange range, FlowFilter filter, Paging paging) {
        this.type = type;
        this.range = range;
        this.filter = filter;
        this.paging = paging;
    }

    @Override
    public void visit(KeyEntry e) {
        if (!e.hasRowIn(range.from(), range.to()) || !filter.matches(e.key())) {
            return;
        }
        FlowKey k = e.key();
        switch (type) {
            case FilterTypeDestName -> add(k.getDestName());
            case FilterTypeSourceName -> add(k.getSourceName());
            case FilterTypeDestNamespace -> add(k.getDestNamespace());
            case FilterTypeSourceNamespace -> add(k.getSourceNamespace());
            case FilterTypePolicyTier, FilterTypePolicyName, FilterTypePolicyNamespace -> {
                k.getPolicies().getEnforcedPoliciesList().forEach(this::addPolicy);
                k.getPolicies().getPendingPoliciesList().forEach(this::addPolicy);
            }
            default -> throw new IllegalStateException("validated earlier: " + type);
        }
    }

    private void addPolicy(PolicyHit h) {
        switch (type) {
            case FilterTypePolicyTier -> add(h.getTier());
            case FilterTypePolicyName -> add(h.getName());
            default -> add(h.getNamespace());
        }
    }

    private void add(String v) {
        if (!v.isEmpty()) {
            values.add(v);
        }
    }

    @Override
    public FilterHintsResult finish() {
        List<String> all = new ArrayList<>(values);
        var out = FilterHintsResult.newBuilder().setMeta(paging.meta(all.size()));
        for (String v : paging.slice(all)) {
            out.addHints(FilterHint.newBuilder().setValue(v));
        }
        return out.build();
    }
}
