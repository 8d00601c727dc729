package calico.goldmane.store;

import calico.libcalico.goldmane.proto.Flow;

/** The counters each bucket row carries, in the order of the row's counter array. */
public final class Stat {

    public static final int PACKETS_IN = 0;
    public static final int PACKETS_OUT = 1;
    public static final int BYTES_IN = 2;
    public static final int BYTES_OUT = 3;
    public static final int STARTED = 4;
    public static final int COMPLETED = 5;
    /** Connections open at the bucket's end: summed across reporters within a bucket, never across buckets. */
    public static final int LIVE = 6;
    public static final int COUNT = 7;

    private Stat() {
    }

    static void read(Flow f, long[] into) {
        into[PACKETS_IN] = f.getPacketsIn();
        into[PACKETS_OUT] = f.getPacketsOut();
        into[BYTES_IN] = f.getBytesIn();
        into[BYTES_OUT] = f.getBytesOut();
        into[STARTED] = f.getNumConnectionsStarted();
        into[COMPLETED] = f.getNumConnectionsCompleted();
        into[LIVE] = f.getNumConnectionsLive();
    }


    public static Flow.Builder write(long[] s, Flow.Builder b) {
        return b.setPacketsIn(s[PACKETS_IN]).setPacketsOut(s[PACKETS_OUT]).setBytesIn(s[BYTES_IN])
                .setBytesOut(s[BYTES_OUT]).setNumConnectionsStarted(s[STARTED])
                .setNumConnectionsCompleted(s[COMPLETED]).setNumConnectionsLive(s[LIVE]);
    }
}
