package calico.libcalico.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link TrainingRun} outside a training run: it returns at once and never asks whether the main is ready. That a
 * training run ends is proven where the mains run it: launcher {@code AppCdsTest}, confd {@code ConfdApplicationTest},
 * cni-plugin {@code CniMainTest}.
 */
class TrainingRunTest {

    @Test
    void withoutThePropertyItReturnsAtOnce() throws Exception {
        assertThat(System.getProperty(TrainingRun.PROPERTY)).isNull();
        boolean[] asked = {false};
        TrainingRun.endOnceReady("test", () -> {
            asked[0] = true;
            return false;
        });
        assertThat(asked[0]).isFalse();
    }
}
