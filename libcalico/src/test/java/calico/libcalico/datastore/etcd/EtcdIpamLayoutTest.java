package calico.libcalico.datastore.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.BlockAffinity;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.IPAMHandle;
import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.libcalico.ipam.AutoAssignRequest;
import calico.libcalico.ipam.IntendedUse;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamOptions;
import calico.libcalico.testing.EtcdServerExtension;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The IPAM kinds are stored where and how Calico's etcdv3 mode keeps them
 * ({@code /calico/ipam/v2/...}, libcalico-go's v1 model values), read back through the raw
 * etcd client; and values written in that form by someone else (Calico) are read.
 */
class EtcdIpamLayoutTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    private final ObjectMapper json = new ObjectMapper();
    private Client raw;
    private EtcdDatastore store;
    private IpamClient ipam;

    @BeforeEach
    void setUp() throws Exception {
        ETCD.ensureRunning();
        raw = Client.builder().endpoints(ETCD.endpoint()).build();
        raw.getKVClient().delete(bytes("/"), DeleteOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS);
        store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()).withRequestTimeout(Duration.ofSeconds(5)));
        ipam = new IpamClient(store, IpamOptions.defaults());
    }

    @AfterEach
    void tearDown() {
        store.close();
        raw.close();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private JsonNode rawJson(String key) throws Exception {
        List<KeyValue> kvs = raw.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS).getKvs();
        assertThat(kvs).as(key).hasSize(1);
        return json.readTree(kvs.get(0).getValue().getBytes());
    }

    private List<String> rawKeys(String prefix) throws Exception {
        return raw.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                .get(10, TimeUnit.SECONDS).getKvs().stream().map(kv -> kv.getKey().toString(StandardCharsets.UTF_8)).toList();
    }

    private void put(String key, String value) throws Exception {
        raw.getKVClient().put(bytes(key), bytes(value)).get(10, TimeUnit.SECONDS);
    }

    @Test
    void blocksAffinitiesHandlesAndConfigLiveUnderCalicosIpamKeys() throws Exception {
        store.create(new IPPool(ObjectMeta.named("p4"), IPPoolSpec.ofCidr("10.30.0.0/24")));
        store.create(new IPPool(ObjectMeta.named("p6"), new IPPoolSpec("fd00:30::/120", null, null, null, null, null, 122,
                null, null, null, null)));
        store.create(new IPAMConfiguration(ObjectMeta.named("default"), new IPAMConfigurationSpec(false, true, 20)));
        ipam.autoAssign(new AutoAssignRequest("k8s-pod-network.AbC1", "node-1", 1, 1, List.of(), List.of(),
                Map.of("node", "node-1"), IntendedUse.WORKLOAD));

        // Which block a node claims first depends on a hash of its name: find it by its key.
        List<String> v4Blocks = rawKeys("/calico/ipam/v2/assignment/ipv4/block/");
        assertThat(v4Blocks).hasSize(1);
        assertThat(v4Blocks.get(0)).matches("/calico/ipam/v2/assignment/ipv4/block/10\\.30\\.0\\.(0|64|128|192)-26");
        String cidr4 = v4Blocks.get(0).substring(v4Blocks.get(0).lastIndexOf('/') + 1).replace("-26", "/26");
        List<String> v6Blocks = rawKeys("/calico/ipam/v2/assignment/ipv6/block/");
        assertThat(v6Blocks).hasSize(1);
        assertThat(v6Blocks.get(0)).matches("/calico/ipam/v2/assignment/ipv6/block/fd00:30::[0-9a-f]*-122");
        String cidr6 = v6Blocks.get(0).substring(v6Blocks.get(0).lastIndexOf('/') + 1).replace("-122", "/122");
        JsonNode block = rawJson(v4Blocks.get(0));
        assertThat(block.path("cidr").asText()).isEqualTo(cidr4);
        assertThat(block.path("affinity").asText()).isEqualTo("host:node-1");
        assertThat(block.path("allocations")).hasSize(64);
        assertThat(block.path("allocations").get(0).asInt()).isZero();
        assertThat(block.path("unallocated")).hasSize(63);
        assertThat(block.path("attributes").get(0).path("handle_id").asText()).isEqualTo("k8s-pod-network.AbC1");
        assertThat(block.path("deleted").asBoolean(true)).isFalse();
        assertThat(block.has("metadata")).as("v1 value, not a v3 resource").isFalse();
        assertThat(rawJson(v6Blocks.get(0)).path("cidr").asText()).isEqualTo(cidr6);
        assertThat(rawJson("/calico/ipam/v2/host/node-1/ipv4/block/" + cidr4.replace('/', '-')))
                .isEqualTo(json.readTree("{\"state\":\"confirmed\",\"deleted\":false}"));
        assertThat(rawJson("/calico/ipam/v2/host/node-1/ipv6/block/" + cidr6.replace('/', '-')).path("state").asText())
                .isEqualTo("confirmed");
        JsonNode handle = rawJson("/calico/ipam/v2/handle/k8s-pod-network.abc1");
        assertThat(handle.path("block").path(cidr4).asInt()).isEqualTo(1);
        assertThat(handle.path("block").path(cidr6).asInt()).isEqualTo(1);
        assertThat(rawJson("/calico/ipam/v2/config"))
                .isEqualTo(json.readTree("{\"strict_affinity\":false,\"auto_allocate_blocks\":true,\"maxBlocksPerHost\":20}"));
        for (String plural : List.of("ipamblocks", "blockaffinities", "ipamhandles", "ipamconfigs")) {
            assertThat(rawKeys("/calico/resources/v3/projectcalico.org/" + plural + "/")).as(plural).isEmpty();
        }

        // Through the Datastore the resources look as on every other backend.
        BlockAffinity v6 = (BlockAffinity) store.get(ResourceKey.of(ResourceKind.BLOCK_AFFINITY,
                IpamNames.affinityName("node-1", Cidr.parse(cidr6)))).orElseThrow();
        assertThat(v6.spec().node()).isEqualTo("node-1");
        assertThat(v6.spec().cidr()).isEqualTo(cidr6);
        IPAMHandle h = (IPAMHandle) store.get(ResourceKey.of(ResourceKind.IPAM_HANDLE, "k8s-pod-network.abc1")).orElseThrow();
        assertThat(h.spec().handleID()).isEqualTo("k8s-pod-network.AbC1");
        assertThat(ipam.check().problems()).isEmpty();

        // Release: the handle key goes; empty affine blocks stay; releasing affinities removes both.
        ipam.releaseByHandle("k8s-pod-network.AbC1");
        assertThat(rawKeys("/calico/ipam/v2/handle/")).isEmpty();
        assertThat(ipam.releaseHostAffinities("node-1", true)).isEqualTo(2);
        assertThat(rawKeys("/calico/ipam/v2/host/")).isEmpty();
        assertThat(rawKeys("/calico/ipam/v2/assignment/")).isEmpty();
    }

    @Test
    void valuesWrittenTheWayCalicoWritesThemAreRead() throws Exception {
        store.create(new IPPool(ObjectMeta.named("p4"), IPPoolSpec.ofCidr("10.31.0.0/24")));
        // A block of node calico-1 holding 10.31.0.0 for a pod, as Calico's etcdv3 mode stores it.
        StringBuilder allocations = new StringBuilder("[0");
        StringBuilder unallocated = new StringBuilder("[");
        for (int i = 1; i < 64; i++) {
            allocations.append(",null");
            unallocated.append(i == 1 ? "" : ",").append(i);
        }
        put("/calico/ipam/v2/assignment/ipv4/block/10.31.0.0-26", "{\"cidr\":\"10.31.0.0/26\",\"affinity\":\"host:calico-1\","
                + "\"strictAffinity\":false,\"allocations\":" + allocations + "],\"unallocated\":" + unallocated + "],"
                + "\"attributes\":[{\"handle_id\":\"k8s-pod-network.c1\",\"secondary\":{\"node\":\"calico-1\"}}],"
                + "\"deleted\":false,\"sequenceNumber\":3}");
        put("/calico/ipam/v2/host/calico-1/ipv4/block/10.31.0.0-26", "{\"state\":\"confirmed\",\"deleted\":false}");
        put("/calico/ipam/v2/handle/k8s-pod-network.c1", "{\"block\":{\"10.31.0.0/26\":1},\"deleted\":false}");
        put("/calico/ipam/v2/config", "{\"strict_affinity\":true,\"auto_allocate_blocks\":true}");

        IPAMBlock b = (IPAMBlock) store.get(ResourceKey.of(ResourceKind.IPAM_BLOCK, "10-31-0-0-26")).orElseThrow();
        assertThat(b.spec().affinity()).isEqualTo("host:calico-1");
        assertThat(b.spec().sequenceNumber()).isEqualTo(3L);
        IPAMConfiguration c = (IPAMConfiguration) store.get(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, "default"))
                .orElseThrow();
        assertThat(c.spec().strictAffinity()).isTrue();
        assertThat(store.list(ResourceKind.BLOCK_AFFINITY).items()).extracting(r -> r.metadata().name())
                .containsExactly("calico-1-10-31-0-0-26");
        assertThat(ipam.check().problems()).isEmpty();
        assertThat(ipam.addressesByHandle("k8s-pod-network.c1")).extracting(Object::toString).containsExactly("10.31.0.0");
        // The next address on calico-1 comes from its block, after Calico's.
        assertThat(ipam.autoAssign(AutoAssignRequest.ipv4("k8s-pod-network.c2", "calico-1")).ipv4().get(0).toString())
                .isEqualTo("10.31.0.1/32");
        assertThat(rawJson("/calico/ipam/v2/assignment/ipv4/block/10.31.0.0-26").path("sequenceNumber").asInt()).isEqualTo(4);
    }

    @Test
    void keysParseBackToTheResourceNames() {
        assertThat(EtcdKeys.parse(bytes("/calico/ipam/v2/host/a-b.c/ipv6/block/fd00::40-122")))
                .contains(ResourceKey.of(ResourceKind.BLOCK_AFFINITY, IpamNames.affinityName("a-b.c", Cidr.parse("fd00::40/122"))));
        assertThat(EtcdKeys.parse(bytes("/calico/ipam/v2/assignment/ipv4/block/10.0.0.64-26")))
                .contains(ResourceKey.of(ResourceKind.IPAM_BLOCK, "10-0-0-64-26"));
        assertThat(EtcdKeys.parse(bytes("/calico/ipam/v2/config"))).contains(ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, "default"));
        assertThat(EtcdKeys.parse(bytes("/calico/ipam/v2/handle/x/y"))).isEmpty();
        assertThat(EtcdKeys.path(ResourceKey.of(ResourceKind.IPAM_BLOCK, "fd00-30---122")))
                .isEqualTo("/calico/ipam/v2/assignment/ipv6/block/fd00:30::-122");
        assertThat(EtcdKeys.path(ResourceKey.of(ResourceKind.BLOCK_AFFINITY, "node-1-10-0-0-0-26")))
                .isEqualTo("/calico/ipam/v2/host/node-1/ipv4/block/10.0.0.0-26");
    }
}
