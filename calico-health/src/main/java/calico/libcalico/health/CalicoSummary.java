package calico.libcalico.health;

import io.micrometer.core.instrument.DistributionSummary;
import java.time.Duration;

/**
 * Calico's summaries (a {@code # TYPE … summary} under Calico's exact name: a Micrometer {@code Timer} would add
 * {@code _seconds}, so seconds are recorded as plain numbers): quantiles 0.5, 0.9 and 0.99 over the last
 * minute, with {@code _count} and {@code _sum}. One shape for every component's Calico summaries.
 */
public final class CalicoSummary {

    private CalicoSummary() {
    }

    /** {@return a builder for the summary {@code name}}; add tags and description, then register */
    public static DistributionSummary.Builder builder(String name, String description) {
        return DistributionSummary.builder(name).description(description).publishPercentiles(0.5, 0.9, 0.99)
                .distributionStatisticExpiry(Duration.ofMinutes(1));
    }
}
