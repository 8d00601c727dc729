package calico.libcalico.datastore.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import calico.api.k8s.ProfileConverter;
import calico.api.model.Resource;
import calico.api.model.ResourceKind;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.testing.Await;
import calico.libcalico.testing.KubeControlPlaneExtension;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lists of thousands of objects on the real kube-apiserver: read in pages of 500 (client-go's
 * pager), every page and every source at one revision while writers keep writing, and a
 * continue token that expires mid-list (etcd compacted between two pages) answered as client-go
 * answers it: one full list again. The watch cache is off, so that list pages and compactions
 * meet etcd directly.
 */
class ListPagingRealServerTest {

    @RegisterExtension
    static final KubeControlPlaneExtension KUBE = new KubeControlPlaneExtension().withoutCrds().withoutControllers()
            .withApiServerFlags("--watch-cache=false");

    private static final int ACCOUNTS = 2_400;
    private static final String NS = "paging";

    @BeforeAll
    static void thousandsOfServiceAccounts() throws Exception {
        KubernetesClient k8s = KUBE.client();
        k8s.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).create();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                String name = String.format("sa-%04d", i);
                done.add(pool.submit(() -> k8s.serviceAccounts().inNamespace(NS).resource(account(name)).create()));
            }
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Profiles come from two sources (namespaces, then service accounts at the namespaces'
     * revision): while a writer adds service accounts, the list holds exactly the accounts
     * written at or before its revision, and the service accounts arrive in pages.
     */
    @Test
    void aListOfThousandsIsReadInPagesAsOneSnapshotWhileWritersWrite() throws Exception {
        RequestLog log = new RequestLog();
        Map<String, Long> written = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (KubernetesClient client = log.client(KUBE.config());
             KubernetesDatastore store = new KubernetesDatastore(KubernetesConfig.of(KUBE.config()), client)) {
            Future<?> writing = writer.submit(() -> {
                for (int i = 0; !stop.get(); i++) {
                    ServiceAccount sa = KUBE.client().serviceAccounts().inNamespace(NS)
                            .resource(account("late-" + i)).create();
                    written.put(sa.getMetadata().getName(), Long.parseLong(sa.getMetadata().getResourceVersion()));
                }
            });
            // The list must overlap the writes: start it once the writer is under way.
            Await.until("the writer under way", Duration.ofSeconds(30), () -> written.size() >= 3);

            ListResult listed = store.list(ResourceKind.PROFILE, null, null);

            stop.set(true);
            writing.get(1, TimeUnit.MINUTES);
            Set<String> accounts = accountsIn(listed);
            Set<String> expectedLate = written.entrySet().stream().filter(e -> e.getValue() <= listed.revision())
                    .map(Map.Entry::getKey).collect(Collectors.toSet());
            assertThat(expectedLate).as("writes before the list's revision").isNotEmpty();
            assertThat(written.size()).as("writes after it").isGreaterThan(expectedLate.size());
            assertThat(accounts.stream().filter(a -> a.startsWith("sa-"))).hasSize(ACCOUNTS);
            assertThat(accounts.stream().filter(a -> a.startsWith("late-"))).containsExactlyInAnyOrderElementsOf(expectedLate);
            assertThat(listed.items()).allSatisfy(r ->
                    assertThat(Long.parseLong(r.metadata().resourceVersion())).isLessThanOrEqualTo(listed.revision()));
            assertThat(listed.items()).extracting(r -> r.metadata().name()).contains("kns.paging", "kns.default");

            List<String> pages = log.matching("GET /api/v1/serviceaccounts?");
            assertThat(pages.get(0)).contains("limit=500", "resourceVersion=" + listed.revision(),
                    "resourceVersionMatch=Exact");
            assertThat(pages.subList(1, pages.size())).hasSizeGreaterThanOrEqualTo(ACCOUNTS / 500)
                    .allSatisfy(p -> assertThat(p).contains("continue=", "limit=500").doesNotContain("resourceVersion="));
        } finally {
            stop.set(true);
            writer.shutdownNow();
        }
    }

    /**
     * Between the first and the second page, an account is written and etcd compacted: the
     * continue token names a revision that is gone (410 Expired), so the datastore reads the
     * whole list again in one request per source, and that list has the new account.
     */
    @Test
    void aContinueTokenThatExpiresMidListMeansOneFullListAgain() {
        RequestLog log = new RequestLog();
        try (KubernetesClient client = log.client(KUBE.config());
             KubernetesDatastore store = new KubernetesDatastore(KubernetesConfig.of(KUBE.config()), client)) {
            long[] midList = new long[1];
            log.once(r -> r.startsWith("GET /api/v1/serviceaccounts?") && r.contains("continue="), () -> {
                midList[0] = Long.parseLong(KUBE.client().serviceAccounts().inNamespace(NS)
                        .resource(account("mid-list")).create().getMetadata().getResourceVersion());
                KUBE.controlPlane().compactEtcd();
            });

            ListResult listed = store.list(ResourceKind.PROFILE, null, null);

            assertThat(midList[0]).as("the compaction happened mid-list").isPositive();
            assertThat(listed.revision()).isGreaterThanOrEqualTo(midList[0]);
            assertThat(accountsIn(listed)).contains("mid-list", "sa-0000", "sa-2399")
                    .hasSizeGreaterThanOrEqualTo(ACCOUNTS + 1);
            List<String> accountLists = log.matching("GET /api/v1/serviceaccounts?");
            String last = accountLists.get(accountLists.size() - 1);
            assertThat(accountLists.get(1)).contains("continue=");
            assertThat(last).doesNotContain("limit=", "continue=").contains("resourceVersionMatch=Exact");
            assertThat(log.matching("GET /api/v1/namespaces").get(1)).doesNotContain("limit=");
        }
    }

    /**
     * apiserver-service pages its own lists with {@code listAt}: every page at the first one's
     * revision, read from etcd's history however far the cluster moved on, until it is compacted.
     */
    @Test
    void listAtAnEarlierRevisionReadsThatSnapshotUntilCompacted() {
        try (KubernetesDatastore store = KUBE.datastore()) {
            KUBE.client().serviceAccounts().inNamespace(NS).resource(account("then")).create();
            ListResult then = store.list(ResourceKind.PROFILE, NS, null);
            KUBE.client().serviceAccounts().inNamespace(NS).withName("then").delete();
            KUBE.client().serviceAccounts().inNamespace(NS).resource(account("now")).create();

            ListResult again = store.listAt(ResourceKind.PROFILE, NS, null, then.revision());

            assertThat(again).isEqualTo(then);
            assertThat(accountsIn(again)).contains("then").doesNotContain("now");
            assertThat(accountsIn(store.list(ResourceKind.PROFILE, NS, null))).contains("now").doesNotContain("then");

            KUBE.controlPlane().compactEtcd();
            assertThatThrownBy(() -> store.listAt(ResourceKind.PROFILE, NS, null, then.revision()))
                    .isInstanceOf(DatastoreException.Compacted.class);
        }
    }

    private static Set<String> accountsIn(ListResult listed) {
        String prefix = ProfileConverter.serviceAccountProfileName(NS, "");
        return listed.items().stream().map(Resource::metadata).map(m -> m.name())
                .filter(n -> n.startsWith(prefix)).map(n -> n.substring(prefix.length()))
                .collect(Collectors.toSet());
    }

    private static ServiceAccount account(String name) {
        return new ServiceAccountBuilder().withNewMetadata().withName(name).endMetadata().build();
    }
}
