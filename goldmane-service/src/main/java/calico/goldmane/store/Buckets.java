package calico.goldmane.store;

/**
 * Time bucketing: bucket {@code b} covers {@code [b*width, (b+1)*width)} seconds since the epoch.
 *
 * @param widthSeconds  bucket width (AGGREGATION_WINDOW, 15 s by default)
 * @param retained      buckets kept, the open one included (RETENTION / width)
 * @param replay        buckets, counted back from the open one, into which flows are accepted and
 *                      de-duplicated (REPLAY_HORIZON / width); never more than {@code retained}
 */
public record Buckets(long widthSeconds, int retained, int replay) {

    public Buckets {
        if (widthSeconds <= 0) {
            throw new IllegalArgumentException("bucket width must be positive, got " + widthSeconds);
        }
        if (retained < 2) {
            throw new IllegalArgumentException("retention must cover at least two buckets, got " + retained);
        }
        if (replay < 1 || replay > retained) {
            throw new IllegalArgumentException("replay horizon must cover 1.." + retained + " buckets, got " + replay);
        }
    }

    /** {@return the bucket holding this second} */
    public int index(long epochSecond) {
        return (int) Math.floorDiv(epochSecond, widthSeconds);
    }

    /** {@return the first bucket starting at or after this second} */
    public int firstStartingAtOrAfter(long epochSecond) {
        return (int) -Math.floorDiv(-epochSecond, widthSeconds);
    }

    public long start(int bucket) {
        return bucket * widthSeconds;
    }

    public long end(int bucket) {
        return (bucket + 1L) * widthSeconds;
    }

    /** {@return the oldest bucket retained while {@code head} is open} */
    public int oldestRetained(int head) {
        return head - retained + 1;
    }

    /** {@return the oldest bucket that still accepts flows while {@code head} is open} */
    public int oldestAccepting(int head) {
        return head - replay + 1;
    }
}
