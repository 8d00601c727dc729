package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;
import calico.libcalico.goldmane.proto.FlowKey;
import java.util.List;

/**
 * An immutable copy of one bucket, taken by the writer: what streams, the push sink and the
 * snapshot store consume, each on its own thread.
 *
 * @param bucket the bucket index
 * @param start  its start, seconds
 * @param end    its end, seconds
 * @param rows   one per key with data in the bucket
 * @param claims the reports counted into it that a replay could still repeat
 * @param late   a re-copy after flows arrived for an already closed bucket (only snapshots use it)
 */
public record Window(int bucket, long start, long end, List<Row> rows, List<Claim> claims, boolean late) {

    /** One key's data in the bucket. */
    public record Row(long id, FlowKey key, long[] stats, Labels labels, List<String> sourceIps,
                      List<String> destIps) {

        public Flow toFlow(long start, long end) {
            return Stat.write(stats, Flow.newBuilder().setKey(key).setStartTime(start).setEndTime(end))
                    .addAllSourceLabels(labels.source()).addAllDestLabels(labels.dest())
                    .addAllSourceIps(sourceIps).addAllDestIps(destIps).build();
        }
    }

    /** A report counted into the bucket: (node, key, start, end) as the collector contract defines it. */
    public record Claim(String node, FlowKey key, long start, long end) {
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }
}
