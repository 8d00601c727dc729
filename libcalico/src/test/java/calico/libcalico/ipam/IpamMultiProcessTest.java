package calico.libcalico.ipam;

import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IPPool;
import calico.api.model.IPPoolSpec;
import calico.api.model.ObjectMeta;
import calico.api.model.ResourceKind;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.etcd.EtcdConfig;
import calico.libcalico.datastore.etcd.EtcdDatastore;
import calico.libcalico.testing.EtcdAdmin;
import calico.libcalico.testing.EtcdServerExtension;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four separate JVMs, two per node, allocate 1,000 addresses at once in one pool that has
 * room for 1,024 through one real etcd: no address is handed out twice, every handle holds
 * exactly its address, and the IPAM state is consistent afterwards.
 */
class IpamMultiProcessTest {

    @RegisterExtension
    static final EtcdServerExtension ETCD = new EtcdServerExtension();

    @Test
    void fourProcessesNeverHandOutAnAddressTwice(@TempDir Path tmp) throws Exception {
        EtcdAdmin.wipe(ETCD.endpoint());
        try (EtcdDatastore store = new EtcdDatastore(EtcdConfig.of(ETCD.endpoint()))) {
            store.create(new IPPool(ObjectMeta.named("pool"),
                    new IPPoolSpec("10.20.0.0/22", null, null, null, null, null, 26, null, null, null, null)));

            List<WorkerProcesses.Outcome> outcomes = WorkerProcesses.run(ETCD.endpoint(),
                    List.of("node-a", "node-a", "node-b", "node-b"), 250, tmp);

            Map<IpAddress, String> owner = new HashMap<>();
            for (WorkerProcesses.Outcome o : outcomes) {
                for (WorkerProcesses.Allocation a : o.allocations()) {
                    String previous = owner.put(a.address(), a.handle());
                    assertThat(previous).as("%s handed out to %s and %s", a.address(), previous, a.handle()).isNull();
                }
            }
            assertThat(owner).hasSize(1000);
            IpamClient ipam = new IpamClient(store, IpamOptions.defaults());
            owner.forEach((address, handle) -> assertThat(ipam.addressesByHandle(handle)).containsExactly(address));
            assertThat(store.list(ResourceKind.IPAM_HANDLE).items()).hasSize(1000);
            IpamCheckReport check = ipam.check();
            assertThat(check.problems()).isEmpty();
            assertThat(check.allocations()).isEqualTo(1000);
            assertThat(ipam.usage().pools()).singleElement().satisfies(p -> assertThat(p.inUse()).isEqualTo(1000));
        }
    }
}
