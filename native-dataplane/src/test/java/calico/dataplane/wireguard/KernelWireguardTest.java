package calico.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.netlink.GenericNetlinkSocket;
import calico.dataplane.netlink.IpPrefix;
import calico.dataplane.testing.NetNs;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The kernel backend's messages. This machine's kernel has no wireguard module, so the device
 * itself is exercised by {@link UserspaceWireguardTest}; here: the family lookup in a namespace
 * (the controller family is always there, wireguard only with the module), the exact bytes
 * of a set request's head and endpoint, and a set request's attributes read back by the
 * get-answer parser (they share the attribute layout).
 */
class KernelWireguardTest {

    @Test
    void findsTheControllerFamilyAndWireguardOnlyWithTheModule() {
        try (NetNs ns = NetNs.create("wg-kwt")) {
            ns.run(() -> {
                try (GenericNetlinkSocket s = new GenericNetlinkSocket()) {
                    assertThat(s.familyId("nlctrl")).hasValue(0x10);
                    assertThat(s.familyId("no-such-family")).isEmpty();
                    assertThat(s.familyId("wireguard").isPresent()).isEqualTo(KernelWireguard.available());
                }
            });
        }
    }

    @Test
    void aSetRequestStartsWithTheGenlHeaderAndTheDeviceName() {
        byte[] msg = WireguardNetlink.set("wireguard.cali", new WireguardChange(null, 51820, null, List.of(), List.of()));
        ByteBuffer b = ByteBuffer.wrap(msg).order(ByteOrder.nativeOrder());
        assertThat(b.get()).isEqualTo((byte) WireguardNetlink.CMD_SET_DEVICE);
        assertThat(b.get()).isEqualTo((byte) 1);
        b.getShort();
        assertThat(b.getShort()).isEqualTo((short) 19); // 4 + "wireguard.cali" + NUL
        assertThat(b.getShort()).isEqualTo((short) WireguardNetlink.DEVICE_IFNAME);
        b.position(b.position() + 16); // 15 bytes and one of padding
        assertThat(b.getShort()).isEqualTo((short) 6);
        assertThat(b.getShort()).isEqualTo((short) WireguardNetlink.DEVICE_LISTEN_PORT);
        assertThat(Short.toUnsignedInt(b.getShort())).isEqualTo(51820);
        assertThat(b.remaining()).isEqualTo(2); // padding
    }

    @Test
    void endpointsAreSockaddrsWithThePortInNetworkOrder() throws Exception {
        byte[] v4 = WireguardNetlink.sockaddr(new InetSocketAddress(InetAddress.getByName("10.99.0.2"), 51820));
        assertThat(v4).hasSize(16);
        assertThat(HexFormat.of().formatHex(v4, 2, 8)).isEqualTo("ca6c0a630002"); // 51820 = 0xca6c, then 10.99.0.2
        byte[] v6 = WireguardNetlink.sockaddr(new InetSocketAddress(InetAddress.getByName("fd00::2"), 51821));
        assertThat(v6).hasSize(28);
        assertThat(WireguardNetlink.parseSockaddr(v6).getPort()).isEqualTo(51821);
    }

    @Test
    void aSetRequestReadsBackAsTheStateItSets() throws Exception {
        WireguardKey priv = WireguardKey.generatePrivate();
        WireguardKey peerKey = WireguardKey.generatePrivate().publicKey();
        WireguardPeer peer = new WireguardPeer(peerKey, new InetSocketAddress(InetAddress.getByName("10.99.0.2"), 51820),
                Set.of(IpPrefix.parse("10.244.1.0/26"), IpPrefix.parse("fd00:1::/122")), 25);
        WireguardState want = new WireguardState(priv, 51820, 0x100000, Map.of(peerKey, peer));
        byte[] set = WireguardNetlink.set("wireguard.cali", WireguardChange.between(null, want));
        assertThat(WireguardNetlink.parseGet(List.of(ByteBuffer.wrap(set).order(ByteOrder.nativeOrder())))).isEqualTo(want);
    }
}
