package calico.libcalico.bird;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.StringReader;
import java.util.List;
import org.junit.jupiter.api.Test;

/** BIRD 2.0's {@code show protocols all} reply as it arrives on the socket. */
class ProtocolsParserTest {

    @Test
    void readsRowsAndBgpDetails() throws Exception {
        String wire = """
                2002-Name       Proto      Table      State  Since         Info
                1002-device1    Device     ---        up     2026-12-01 09:20:27.481 \s
                1006-
                1002-Mesh_10_99_0_2 BGP        ---        up     2026-12-01 09:20:28.123  Established  \s
                1006-  Description:    node-to-node mesh
                   BGP state:          Established
                     Neighbor address: 10.99.0.2
                     Neighbor AS:      64512
                1002-Global_10_0_0_254 BGP        ---        start  2026-12-01 09:20:28.123  Active        Socket: Connection refused
                1006-  BGP state:          Active
                     Neighbor address: 10.0.0.254
                     Last error:       Socket: Connection refused
                0000\s
                """;
        BirdReply reply = BirdControl.read(new BufferedReader(new StringReader(wire)));
        assertThat(reply.finalCode()).isZero();
        List<BirdProtocol> ps = ProtocolsParser.parse(reply);
        assertThat(ps).extracting(BirdProtocol::name).containsExactly("device1", "Mesh_10_99_0_2", "Global_10_0_0_254");
        assertThat(ps.get(1).established()).isTrue();
        assertThat(ps.get(1).neighbor()).isEqualTo("10.99.0.2");
        assertThat(ps.get(1).since()).isEqualTo("2026-12-01 09:20:28.123");
        assertThat(ps.get(2).established()).isFalse();
        assertThat(ps.get(2).state()).isEqualTo("start");
        assertThat(ps.get(2).info()).isEqualTo("Active        Socket: Connection refused");
        assertThat(ps.get(2).lastError()).isEqualTo("Socket: Connection refused");
        assertThat(ps.get(0).established()).isFalse();
    }

    @Test
    void errorCodesAreErrors() throws Exception {
        BirdReply r = BirdControl.read(new BufferedReader(new StringReader("8002 /etc/bird.cfg:3:1 syntax error\n")));
        assertThat(r.error()).isTrue();
        assertThat(r.text()).contains("syntax error");
    }
}
