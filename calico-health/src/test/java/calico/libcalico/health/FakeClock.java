package calico.libcalico.health;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock that only moves when told to; thread-safe enough for tests (volatile instant). */
final class FakeClock extends Clock {

    private volatile Instant now;

    FakeClock(Instant start) {
        this.now = start;
    }

    FakeClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    void advance(Duration step) {
        now = now.plus(step);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("FakeClock is UTC only");
    }
}
