package calico.dataplane.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.dataplane.netlink.IpPrefix;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The userspace API text, and {@link WireguardChange}: only what differs is sent. */
class UapiTest {

    static final WireguardKey PRIV = WireguardKey.fromHex(WireguardKeyTest.ALICE_PRIVATE);
    static final WireguardKey PEER = WireguardKey.fromHex(WireguardKeyTest.BOB_PUBLIC);
    static final WireguardKey OTHER = WireguardKey.fromHex(WireguardKeyTest.ALICE_PUBLIC);

    static WireguardPeer peer(WireguardKey key, String ip, String... allowed) throws Exception {
        return new WireguardPeer(key, new InetSocketAddress(InetAddress.getByName(ip), 51820),
                java.util.Arrays.stream(allowed).map(IpPrefix::parse).collect(java.util.stream.Collectors.toSet()), 0);
    }

    @Test
    void aNewDeviceGetsEverything() throws Exception {
        WireguardState desired = new WireguardState(PRIV, 51820, 0x100000,
                Map.of(PEER, peer(PEER, "10.0.0.2", "10.244.1.0/26", "10.244.1.7/32")));
        String set = Uapi.set(WireguardChange.between(null, desired));
        assertThat(set).isEqualTo("set=1\nprivate_key=" + PRIV.hex() + "\nlisten_port=51820\nfwmark=1048576\n"
                + "public_key=" + PEER.hex() + "\nendpoint=10.0.0.2:51820\npersistent_keepalive_interval=0\n"
                + "replace_allowed_ips=true\nallowed_ip=10.244.1.0/26\nallowed_ip=10.244.1.7/32\n\n");
    }

    @Test
    void onlyChangedPeersAreWrittenAndGoneOnesRemoved() throws Exception {
        WireguardState now = new WireguardState(PRIV, 51820, 0x100000,
                Map.of(PEER, peer(PEER, "10.0.0.2", "10.244.1.0/26"), OTHER, peer(OTHER, "10.0.0.3", "10.244.2.0/26")));
        WireguardState next = new WireguardState(PRIV, 51820, 0x100000,
                Map.of(PEER, peer(PEER, "10.0.0.2", "10.244.1.0/26", "10.244.9.0/26")));
        WireguardChange c = WireguardChange.between(now, next);
        assertThat(c.privateKey()).isNull();
        assertThat(c.listenPort()).isNull();
        assertThat(c.removePeers()).containsExactly(OTHER);
        assertThat(c.setPeers()).extracting(WireguardPeer::publicKey).containsExactly(PEER);
        assertThat(Uapi.set(c)).startsWith("set=1\npublic_key=" + OTHER.hex() + "\nremove=true\npublic_key=" + PEER.hex());
        assertThat(WireguardChange.between(next, next).isEmpty()).isTrue();
    }

    @Test
    void allowedIpsAreStoredAsNetworks() throws Exception {
        assertThat(peer(PEER, "10.0.0.2", "10.244.1.5/26").allowedIps()).containsExactly(IpPrefix.parse("10.244.1.0/26"));
    }

    @Test
    void parsesAGetAnswerAndItsStatistics() {
        String answer = "private_key=" + PRIV.hex() + "\nlisten_port=51820\nfwmark=1048576\npublic_key=" + PEER.hex()
                + "\nendpoint=10.0.0.2:51820\nlast_handshake_time_sec=0\nrx_bytes=0\ntx_bytes=92\n"
                + "persistent_keepalive_interval=5\nallowed_ip=10.244.1.0/26\nprotocol_version=1\nerrno=0\n\n";
        WireguardState s = Uapi.parseGet(answer);
        assertThat(s.privateKey()).isEqualTo(PRIV);
        assertThat(s.publicKey()).isEqualTo(OTHER);
        assertThat(s.fwmark()).isEqualTo(0x100000);
        WireguardPeer p = s.peers().get(PEER);
        assertThat(p.endpoint().getPort()).isEqualTo(51820);
        assertThat(p.keepaliveSeconds()).isEqualTo(5);
        assertThat(p.allowedIps()).containsExactly(IpPrefix.parse("10.244.1.0/26"));
        assertThat(Uapi.parseGet("listen_port=0\nerrno=0\n\n").privateKey()).isNull();
        assertThat(Uapi.parseEndpoint("[fd00::2]:51821").getAddress().getHostAddress()).isEqualTo("fd00:0:0:0:0:0:0:2");
        assertThatThrownBy(() -> Uapi.parseGet("errno=19\n\n")).hasMessageContaining("errno 19");
        assertThat(Set.of(s.peers().keySet().toArray())).hasSize(1);
    }
}
