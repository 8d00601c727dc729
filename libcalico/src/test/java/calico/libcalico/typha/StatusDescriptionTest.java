package calico.libcalico.typha;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

/** A failed attempt is logged in one line: gRPC's own status text carries the cause's stack trace. */
class StatusDescriptionTest {

    @Test
    void aStatusWithACauseIsOneLineNamingCodeDescriptionAndCause() {
        Status s = Status.UNAVAILABLE.withDescription("io exception")
                .withCause(new ConnectException("Connection refused: /127.0.0.1:5473"));

        String line = TyphaClient.describe(s);

        assertThat(line).isEqualTo("UNAVAILABLE: io exception (java.net.ConnectException: Connection refused: "
                + "/127.0.0.1:5473)");
        assertThat(s.toString()).as("what was logged before").contains("\tat ");
    }

    @Test
    void aBareStatusIsItsCode() {
        assertThat(TyphaClient.describe(Status.CANCELLED)).isEqualTo("CANCELLED");
    }
}
