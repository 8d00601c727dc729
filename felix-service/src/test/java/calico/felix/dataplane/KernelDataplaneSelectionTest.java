package calico.felix.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import calico.dataplane.testing.NetNs;
import calico.felix.app.FelixApplication;
import calico.felix.app.FelixConfiguration;
import calico.felix.app.FelixEnvironment;
import calico.felix.app.FelixProperties;
import calico.felix.calc.FelixSettings;
import org.junit.jupiter.api.Test;

/**
 * Which {@link Dataplane} felix gets from Calico-style variables (checked at start-up by felix's own wiring,
 * {@link FelixConfiguration}, and built by {@link FelixApplication}).
 */
class KernelDataplaneSelectionTest {

    /** Felix in process with {@code pairs} ({@code NAME=value}) over a node name, an MTU file and free loopback ports. */
    private static final class Runner {
        private final java.util.Map<String, String> variables = new java.util.LinkedHashMap<>();

        Runner() {
            variables.putAll(java.util.Map.of("HOSTNAME", "", "FELIX_FELIXHOSTNAME", "node-a",
                    "FELIX_MTUFILEPATH", System.getProperty("java.io.tmpdir") + "/felix-selection-test-mtu",
                    "FELIX_DATASTORETYPE", "memory", "FELIX_HEALTHPORT", "0", "FELIX_HEALTHHOST", "127.0.0.1",
                    "FELIX_ADMINPORT", "0", "FELIX_ADMINHOST", "127.0.0.1"));
        }

        Runner withPropertyValues(String... pairs) {
            Runner r = new Runner();
            for (String p : pairs) {
                int eq = p.indexOf('=');
                r.variables.put(p.substring(0, eq), p.substring(eq + 1));
            }
            return r;
        }

        void run(java.util.function.Consumer<FelixApplication> check) {
            try (FelixApplication app = FelixApplication.start(variables)) {
                check.accept(app);
            }
        }

        /** {@return why felix refused to start} */
        org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable> failure() {
            try (FelixApplication app = FelixApplication.start(variables)) {
                throw new AssertionError("started with " + variables);
            } catch (RuntimeException e) {
                return assertThat(e);
            }
        }
    }

    private final Runner runner = new Runner();

    /** The typed settings felix's environment gives (their owner; the dataplane gets them resolved). */
    private static FelixSettings settings(FelixApplication app) {
        return app.configuration().environment().settings();
    }

    /** As in Calico, felix programs the kernel unless told otherwise. */
    @Test
    void kernelIsTheDefault() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kdd")) {
            runner.withPropertyValues("FELIX_DATAPLANENETNS=" + ns.name()).run(context -> {
                assertThat(context.state().dataplane()).isInstanceOf(KernelDataplane.class);
                FelixProperties p = context.configuration().felix();
                assertThat(p.dataplaneDriver()).isEqualTo("kernel");
                assertThat(settings(context).iptablesBackend()).isEqualTo("Auto");
            });
        }
    }

    @Test
    void modelOnlyWhenAskedFor() {
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=model").run(context -> {
            assertThat(context.state().dataplane()).isInstanceOf(ModelDataplane.class);
            FelixProperties p = context.configuration().felix();
            assertThat(p.dataplaneDriver()).isEqualTo("model");
            assertThat(p.dataplaneNetns()).isEmpty();
            assertThat(settings(context).iptablesBackend()).isEqualTo("Auto");
        });
    }

    @Test
    void iptablesDriverIsTheKernelDataplaneInTheGivenNamespace() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kds")) {
            runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=iptables", "FELIX_DATAPLANENETNS=" + ns.name(),
                    "FELIX_IPTABLESBACKEND=nft").run(context -> {
                Dataplane d = context.state().dataplane();
                assertThat(d).isInstanceOf(KernelDataplane.class);
                assertThat(((KernelDataplane) d).netns()).isEqualTo(ns.name());
                assertThat(settings(context).iptablesBackend()).isEqualTo("NFT");
            });
        }
    }

    @Test
    void kernelIsTheSameKernelDataplane() {
        assumeTrue(NetNs.available(), "needs root to create network namespaces");
        try (NetNs ns = NetNs.create("kdk")) {
            runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=Kernel", "FELIX_DATAPLANENETNS=" + ns.name())
                    .run(context -> {
                        assertThat(context.state().dataplane()).isInstanceOf(KernelDataplane.class);
                        assertThat(context.configuration().felix().dataplaneDriver()).isEqualTo("kernel");
                        assertThat(((KernelDataplane) context.state().dataplane()).backend())
                                .as("chosen at the first batch, from its config").isEqualTo("none");
                    });
        }
    }

    @Test
    void aMissingNamespaceFailsStartUpNamingIt() {
        assumeTrue(NetNs.available(), "needs root");
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=iptables", "FELIX_DATAPLANENETNS=no-such-ns-kd",
                "FELIX_IPTABLESBACKEND=NFT").failure().hasStackTraceContaining("/run/netns/no-such-ns-kd");
    }

    @Test
    void badValuesFailStartUpNamingTheVariable() {
        runner.withPropertyValues("FELIX_DATAPLANEDRIVERNAME=bpf").failure()
                .hasStackTraceContaining("FELIX_DATAPLANEDRIVERNAME").hasStackTraceContaining("model, kernel, iptables");
        runner.withPropertyValues("FELIX_IPTABLESBACKEND=xt").failure()
                .hasStackTraceContaining("FELIX_IPTABLESBACKEND").hasStackTraceContaining("Auto, NFT, Legacy");
        runner.withPropertyValues("FELIX_DATAPLANENETNS=../etc").failure().hasStackTraceContaining("FELIX_DATAPLANENETNS");
    }
}
