package calico.goldmane.server;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand; the writer rolls the ring over when it crosses a bucket boundary. */
final class MutableClock extends Clock {

    private final AtomicLong millis;

    MutableClock(long epochSecond) {
        this.millis = new AtomicLong(epochSecond * 1000);
    }

    void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }

    long seconds() {
        return millis.get() / 1000;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }
}
