package calico.felix.calc;

import static calico.felix.calc.Res.*;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.PolicyType;
import calico.api.model.Rule;
import calico.felix.testing.LogCapture;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A missing tier or profile is warned about only when it is still missing at in-sync: a
 * snapshot delivers its kinds in any order (felix's image training saw a policy before its tier
 * and warned of a tier that was on its way).
 */
class MissingReferentWarningTest {

    private static final String ME = "node-1";

    @Test
    void aTierAndAProfileThatArriveLaterInTheSnapshotAreNotWarnedAbout() {
        try (LogCapture log = new LogCapture(PolicyResolver.class)) {
            Harness h = new Harness(ME)
                    .put(wep("ns1", "a", ME, "10.0.0.1", labels("app", "a"), "kns.ns1"))
                    .put(gnp("t1.p", "t1", 1.0, "app == 'a'", List.of(Rule.allow()), List.of(), PolicyType.Ingress));
            h.put(tier("t1", 10.0, null), nsProfile("ns1")).inSync();

            assertThat(log.containing("missing")).isEmpty();
            assertThat(h.wep("ns1/a").ingress()).singleElement()
                    .satisfies(t -> assertThat(t.missing()).isFalse());
        }
    }

    @Test
    void whatIsStillMissingAtInSyncIsWarnedAboutOnceAndLiveChangesAtOnce() {
        try (LogCapture log = new LogCapture(PolicyResolver.class)) {
            Harness h = new Harness(ME)
                    .put(wep("ns1", "a", ME, "10.0.0.1", labels("app", "a"), "kns.ns1"))
                    .put(gnp("t1.p", "t1", 1.0, "app == 'a'", List.of(Rule.allow()), List.of(), PolicyType.Ingress));
            assertThat(log.containing("missing")).isEmpty();

            h.inSync();
            assertThat(log.containing("missing tier t1")).hasSize(1);
            assertThat(log.containing("missing profile kns.ns1")).hasSize(1);

            // After in-sync a missing referent is warned about as it is seen, once.
            h.put(gnp("t2.p", "t2", 1.0, "app == 'a'", List.of(Rule.allow()), List.of(), PolicyType.Ingress));
            h.put(wep("ns1", "a", ME, "10.0.0.1", labels("app", "a", "v", "2"), "kns.ns1"));
            assertThat(log.containing("missing tier t2")).hasSize(1);
            assertThat(log.containing("missing tier t1")).hasSize(1);
        }
    }
}
