package calico.libcalico.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand (goldmane's writer rolls its ring over when it crosses a bucket boundary). */
public final class MutableClock extends Clock {

    private final AtomicLong millis;

    public MutableClock(long epochSecond) {
        this.millis = new AtomicLong(epochSecond * 1000);
    }

    public void advance(Duration d) {
        millis.addAndGet(d.toMillis());
    }

    public long seconds() {
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
