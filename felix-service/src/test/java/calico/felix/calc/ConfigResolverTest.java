package calico.felix.calc;

import static calico.felix.calc.InfraFixtures.deleted;
import static calico.felix.calc.InfraFixtures.felixConfig;
import static calico.felix.calc.InfraFixtures.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import calico.api.model.ResourceKind;
import calico.felix.testing.LogCapture;
import calico.libcalico.syncer.SyncerStatus;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ConfigResolverTest {

    private static final String HOST = "node-a";

    private final Dispatcher dispatcher = new Dispatcher();
    private final InfraRecorder out = new InfraRecorder();

    private void start(Map<String, String> env) {
        new ConfigResolver(HOST, env, out).registerWith(dispatcher);
    }

    private Map<String, String> lastConfig() {
        return ((DataplaneUpdate.ConfigUpdate) out.state.get("config")).settings().effective();
    }

    @Test
    void heldUntilInSyncThenEveryKnownSettingWithCalicoDefaults() {
        start(Map.of());
        dispatcher.onStatus(SyncerStatus.RESYNC_IN_PROGRESS);
        dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of("logSeverityScreen", "Debug")))));
        assertThat(out.events).isEmpty();

        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(out.drain()).hasSize(1);
        Map<String, String> v = lastConfig();
        assertThat(v.keySet()).containsExactlyInAnyOrderElementsOf(ConfigFields.EMITTED);
        assertThat(v).containsEntry("logSeverityScreen", "Debug")
                .containsEntry("healthEnabled", "false")
                .containsEntry("healthPort", "9099")
                .containsEntry("healthHost", "localhost")
                .containsEntry("prometheusMetricsEnabled", "false")
                .containsEntry("prometheusMetricsPort", "9091")
                .containsEntry("defaultEndpointToHostAction", "Drop")
                .containsEntry("interfacePrefix", "cali")
                .containsEntry("chainInsertMode", "Insert")
                .containsEntry("iptablesBackend", "Auto")
                .containsEntry("iptablesRefreshInterval", "180s")
                .containsEntry("routeRefreshInterval", "90s")
                .containsEntry("reportingInterval", "30s")
                .containsEntry("reportingTTL", "90s")
                .containsEntry("ipipEnabled", "")
                .containsEntry("vxlanEnabled", "")
                .containsEntry("wireguardEnabled", "false")
                .containsEntry("bpfEnabled", "false")
                .containsEntry("nftablesMode", "Auto")
                .containsEntry("failsafeInboundHostPorts",
                        "tcp:22,udp:68,tcp:179,tcp:2379,tcp:2380,tcp:5473,tcp:6443,tcp:6666,tcp:6667")
                .containsEntry("failsafeOutboundHostPorts",
                        "udp:53,udp:67,tcp:179,tcp:2379,tcp:2380,tcp:5473,tcp:6443,tcp:6666,tcp:6667");
        assertThat(v).doesNotContainKeys("reportingIntervalSecs", "reportingTTLSecs", "iptablesLockTimeoutSecs",
                "iptablesPostWriteCheckIntervalSecs", "iptablesLockProbeIntervalMillis");
    }

    @Test
    void everyDefaultNamesARealFieldAndIsAValidValueOfIt() {
        FelixDefaults.VALUES.forEach((field, value) -> {
            assertThat(ConfigFields.SHAPES).as("default for unknown field %s", field).containsKey(field);
            assertThat(ConfigFields.normalize(field, value)).as(field).isEqualTo(value);
        });
        calico.api.model.FelixConfigurationEnums.FIELDS.keySet().forEach(f -> assertThat(ConfigFields.SHAPES.get(f)).as(f)
                .isEqualTo(ConfigFields.Shape.ENUM));
        calico.api.model.FelixConfigurationSpec.DURATION_FIELDS.forEach(f -> assertThat(ConfigFields.SHAPES.get(f)).as(f)
                .isEqualTo(ConfigFields.Shape.DURATION));
    }

    /** global, node, env (FELIX_LOGSEVERITYSCREEN / FELIX_HEALTHPORT), expected. */
    static Stream<Arguments> priority() {
        return Stream.of(
                Arguments.of(null, null, null, "Info", "9099"),
                Arguments.of("Warning", null, null, "Warning", "9100"),
                Arguments.of("Warning", "Error", null, "Error", "9200"),
                Arguments.of(null, "Error", null, "Error", "9200"),
                Arguments.of("Warning", "Error", "debug", "Debug", "9300"),
                Arguments.of(null, null, "DEBUG", "Debug", "9300"),
                Arguments.of("Warning", null, "Fatal", "Fatal", "9300"));
    }

    @ParameterizedTest(name = "global={0} node={1} env={2} -> {3}")
    @MethodSource("priority")
    void environmentBeatsNodeBeatsGlobalBeatsDefault(String global, String node, String env, String expected,
                                                     String expectedPort) {
        Map<String, String> environment = new HashMap<>();
        if (env != null) {
            environment.put("FELIX_LOGSEVERITYSCREEN", env);
            environment.put("FELIX_HEALTHPORT", "9300");
        }
        start(environment);
        if (global != null) {
            dispatcher.onUpdates(List.of(set(felixConfig("default",
                    Map.of("logSeverityScreen", global, "healthPort", 9100)))));
        }
        if (node != null) {
            dispatcher.onUpdates(List.of(set(felixConfig("node." + HOST,
                    Map.of("logSeverityScreen", node, "healthPort", 9200)))));
        }
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry("logSeverityScreen", expected).containsEntry("healthPort", expectedPort);
    }

    @Test
    void anotherNodesOverridesAreIgnoredAndProduceNothing() {
        start(Map.of());
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        out.drain();

        dispatcher.onUpdates(List.of(set(felixConfig("node.node-b", Map.of("logSeverityScreen", "Debug")))));

        assertThat(out.events).isEmpty();
        assertThat(lastConfig()).containsEntry("logSeverityScreen", "Info");
    }

    @Test
    void unchangedResolutionIsNotEmittedAgain() {
        start(Map.of("FELIX_HEALTHPORT", "9300"));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        out.drain();

        // Same values again, a value equal to the default, and a setting the environment overrides.
        dispatcher.onUpdates(List.of(
                set(felixConfig("default", Map.of())),
                set(felixConfig("default", Map.of("interfacePrefix", "cali"))),
                set(felixConfig("node." + HOST, Map.of("healthPort", 9200))),
                set(felixConfig("node." + HOST, Map.of("healthPort", 9200)))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(out.events).isEmpty();
    }

    @Test
    void deletingAResourceFallsBackToTheNextSource() {
        start(Map.of());
        dispatcher.onUpdates(List.of(
                set(felixConfig("default", Map.of("interfacePrefix", "tap"))),
                set(felixConfig("node." + HOST, Map.of("interfacePrefix", "veth")))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        assertThat(lastConfig()).containsEntry("interfacePrefix", "veth");

        dispatcher.onUpdates(List.of(deleted(ResourceKind.FELIX_CONFIGURATION, "node." + HOST)));
        assertThat(lastConfig()).containsEntry("interfacePrefix", "tap");

        dispatcher.onUpdates(List.of(deleted(ResourceKind.FELIX_CONFIGURATION, "default")));
        assertThat(lastConfig()).containsEntry("interfacePrefix", "cali");
        assertThat(out.drain()).hasSize(3);
    }

    /** source fields, expected new-field values. */
    static Stream<Arguments> olderNames() {
        return Stream.of(
                Arguments.of(Map.of("reportingIntervalSecs", 10), "reportingInterval", "10s"),
                Arguments.of(Map.of("reportingIntervalSecs", 10, "reportingInterval", "20s"), "reportingInterval", "20s"),
                Arguments.of(Map.of("reportingTTLSecs", 45), "reportingTTL", "45s"),
                Arguments.of(Map.of("iptablesLockTimeoutSecs", 3), "iptablesLockTimeout", "3s"),
                Arguments.of(Map.of("iptablesPostWriteCheckIntervalSecs", 2), "iptablesPostWriteCheckInterval", "2s"),
                Arguments.of(Map.of("iptablesLockProbeIntervalMillis", 100), "iptablesLockProbeInterval", "100ms"));
    }

    @ParameterizedTest(name = "{0} -> {1}={2}")
    @MethodSource("olderNames")
    void olderIntegerFieldsFeedTheirDurationFieldWhenItIsUnset(Map<String, ?> spec, String field, String expected) {
        start(Map.of());
        dispatcher.onUpdates(List.of(set(felixConfig("default", spec))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry(field, expected);
    }

    @Test
    void olderNamesTakeTheirSourcesPriority() {
        start(Map.of("FELIX_REPORTINGINTERVALSECS", "7"));
        dispatcher.onUpdates(List.of(
                set(felixConfig("default", Map.of("reportingTTL", "60s", "reportingInterval", "20s"))),
                set(felixConfig("node." + HOST, Map.of("reportingTTLSecs", 5)))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry("reportingTTL", "5s").containsEntry("reportingInterval", "7s");
    }

    @Test
    void invalidEnvironmentValuesAreIgnoredAndReportedByVariable() {
        Map<String, String> env = Map.of(
                "FELIX_HEALTHPORT", "abc",
                "FELIX_LOGSEVERITYSCREEN", "loud",
                "FELIX_PROMETHEUSMETRICSPORT", "70000",
                "FELIX_BPFENABLED", "maybe",
                "FELIX_FAILSAFEINBOUNDHOSTPORTS", "tcp:22,icmp:1",
                "FELIX_ROUTEREFRESHINTERVAL", "soon",
                "FELIX_DATASTORETYPE", "etcdv3",
                "PATH", "/usr/bin");

        List<String> problems = ConfigResolver.validateEnvironment(env);

        assertThat(problems).hasSize(6);
        assertThat(String.join("\n", problems)).contains("FELIX_HEALTHPORT", "\"abc\"", "FELIX_LOGSEVERITYSCREEN",
                "FELIX_PROMETHEUSMETRICSPORT", "FELIX_BPFENABLED", "FELIX_FAILSAFEINBOUNDHOSTPORTS",
                "FELIX_ROUTEREFRESHINTERVAL").doesNotContain("FELIX_DATASTORETYPE", "PATH");

        assertThatCode(() -> start(env)).doesNotThrowAnyException();
        dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of("healthPort", 9100)))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        assertThat(lastConfig()).containsEntry("healthPort", "9100").containsEntry("logSeverityScreen", "Info")
                .containsEntry("prometheusMetricsPort", "9091").containsEntry("bpfEnabled", "false");
    }

    @Test
    void healthTimeoutOverridesAreReadInCalicosFormAndABadOneIsRefusedByItsVariable() {
        Map<String, String> env = Map.of("FELIX_HEALTHTIMEOUTOVERRIDES", "InternalDataplaneMainLoop=5m, CalculationGraph=90");
        assertThat(ConfigResolver.validateEnvironment(env)).isEmpty();
        assertThat(ConfigResolver.environmentSettings(env).healthTimeoutOverrides()).containsOnly(
                Map.entry("InternalDataplaneMainLoop", java.time.Duration.ofMinutes(5)),
                Map.entry("CalculationGraph", java.time.Duration.ofSeconds(90)));
        assertThat(FelixSettings.defaults().healthTimeoutOverrides()).isEmpty();
        Map<String, String> reasons = Map.of("CalculationGraph", "\"CalculationGraph\" is not key=value",
                "CalculationGraph=soon", "\"soon\" is not a duration",
                "CalculationGraph=-1s", "\"CalculationGraph=-1s\": a timeout must not be negative");
        reasons.forEach((bad, reason) -> assertThat(String.join("\n",
                ConfigResolver.validateEnvironment(Map.of("FELIX_HEALTHTIMEOUTOVERRIDES", bad))))
                .as(bad).contains("FELIX_HEALTHTIMEOUTOVERRIDES (healthTimeoutOverrides)", reason));
    }

    @Test
    void anInterfacePatternThatDoesNotCompileIsReportedAndTheDefaultKept() {
        List<String> problems = ConfigResolver.validateEnvironment(Map.of("FELIX_MTUIFACEPATTERN", "^(eth",
                "FELIX_NATPORTRANGE", "40000:30000"));
        assertThat(problems).hasSize(2);
        assertThat(String.join("\n", problems)).contains("FELIX_MTUIFACEPATTERN", "\"^(eth\"", "FELIX_NATPORTRANGE");
        assertThat(FelixSettings.from(Map.of("mtuIfacePattern", "^(eth")).mtuIfacePattern())
                .isEqualTo(FelixSettings.defaults().mtuIfacePattern());
        assertThat(FelixSettings.from(Map.of("mtuIfacePattern", "^eth")).mtuIfacePattern()).isEqualTo("^eth");
        assertThat(FelixSettings.from(Map.of("natPortRange", "40000:40010")).natPortRange())
                .contains(calico.api.model.Port.range(40000, 40010));
        assertThat(FelixSettings.defaults().natPortRange()).isEmpty();
        assertThat(FelixSettings.defaults().natOutgoingExcludesHosts()).isFalse();
        assertThat(FelixSettings.from(Map.of("natOutgoingExclusions", "IPPoolsAndHostIPs")).natOutgoingExcludesHosts())
                .isTrue();
    }

    @Test
    void wireguardTablesAreTheFirstTwoUsableIndicesOfTheRouteTableRanges() {
        FelixSettings d = FelixSettings.defaults();
        assertThat(List.of(d.wireguardTableIndex(), d.wireguardTableIndexV6())).containsExactly(1L, 2L);
        assertThat(List.of(d.wireguardListeningPortV6(), (Object) d.wireguardInterfaceNameV6()))
                .containsExactly(51821, "wg-v6.cali");
        // The kernel's 253-255 are skipped; ranges are walked in order.
        FelixSettings ranges = FelixSettings.from(Map.of("routeTableRanges", "252-254,300-310"));
        assertThat(List.of(ranges.wireguardTableIndex(), ranges.wireguardTableIndexV6())).containsExactly(252L, 300L);
        // The deprecated single range counts when routeTableRanges is unset; one table leaves IPv6 none (0).
        FelixSettings one = FelixSettings.from(Map.of("routeTableRange", "7-7"));
        assertThat(List.of(one.wireguardTableIndex(), one.wireguardTableIndexV6())).containsExactly(7L, 0L);
        List<String> problems = ConfigResolver.validateEnvironment(Map.of("FELIX_ROUTETABLERANGES", "9-3"));
        assertThat(String.join("\n", problems)).contains("FELIX_ROUTETABLERANGES");
    }

    @Test
    void anInvalidEnvironmentValueIsLoggedOnceWithItsVariable() {
        try (LogCapture logs = new LogCapture(ConfigResolver.class)) {
            start(Map.of("FELIX_HEALTHPORT", "abc"));
            dispatcher.onStatus(SyncerStatus.IN_SYNC);
            for (int i = 0; i < 3; i++) {
                dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of("healthPort", 9100 + i)))));
            }

            assertThat(logs.containing("FELIX_HEALTHPORT")).hasSize(1);
            assertThat(lastConfig()).containsEntry("healthPort", "9102");
        }
    }

    @Test
    void emptyEnvironmentValuesAreUnsetNotErrors() {
        assertThat(ConfigResolver.validateEnvironment(Map.of("FELIX_INTERFACEPREFIX", "", "FELIX_HEALTHPORT", " ")))
                .isEmpty();
        start(Map.of("FELIX_INTERFACEPREFIX", ""));
        dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of("interfacePrefix", "tap")))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        assertThat(lastConfig()).containsEntry("interfacePrefix", "tap");
    }

    @Test
    void validEnvironmentHasNoProblems() {
        assertThat(ConfigResolver.validateEnvironment(Map.of("FELIX_HEALTHPORT", "9099",
                "FELIX_IPTABLESBACKEND", "nft", "FELIX_FAILSAFEINBOUNDHOSTPORTS", "none"))).isEmpty();
    }

    @Test
    void environmentNamesAndValuesAreReadCaseInsensitivelyAndNormalized() {
        start(Map.of(
                "felix_healthPort", "9400",
                "FELIX_CHAININSERTMODE", "append",
                "FELIX_ROUTEREFRESHINTERVAL", "30",
                "FELIX_IPTABLESLOCKPROBEINTERVAL", "250ms",
                "FELIX_IPINIPENABLED", "yes",
                "FELIX_IPTABLESMARKMASK", "4294901760",
                "FELIX_FAILSAFEINBOUNDHOSTPORTS", "UDP:53, tcp:10.0.0.0/8:22, 2222",
                "FELIX_HEALTHENABLED", "TRUE"));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry("healthPort", "9400")
                .containsEntry("chainInsertMode", "Append")
                .containsEntry("routeRefreshInterval", "30s")
                .containsEntry("iptablesLockProbeInterval", "250ms")
                .containsEntry("ipipEnabled", "true")
                .containsEntry("iptablesMarkMask", "0xffff0000")
                .containsEntry("failsafeInboundHostPorts", "udp:53,tcp:10.0.0.0/8:22,tcp:2222")
                .containsEntry("healthEnabled", "true");
    }

    @Test
    void invalidDatastoreValuesFallThroughToTheNextSource() {
        start(Map.of());
        dispatcher.onUpdates(List.of(
                set(felixConfig("default", Map.of("chainInsertMode", "Append"))),
                set(felixConfig("node." + HOST, Map.of("chainInsertMode", "Sideways", "routeRefreshInterval", "later")))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry("chainInsertMode", "Append").containsEntry("routeRefreshInterval", "90s");
    }

    @Test
    void structuredResourceFieldsArePrintedInTheEnvironmentForm() {
        start(Map.of());
        dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of(
                "failsafeInboundHostPorts", List.of(Map.of("protocol", "TCP", "port", 22),
                        Map.of("protocol", "UDP", "port", 53, "net", "fd00::/64")),
                "kubeNodePortRanges", List.of("30000:31000", 32000),
                "bpfLogFilters", Map.of("eth0", "tcp", "all", "icmp"))))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);

        assertThat(lastConfig()).containsEntry("failsafeInboundHostPorts", "tcp:22,udp:[fd00::/64]:53")
                .containsEntry("kubeNodePortRanges", "30000:31000,32000")
                .containsEntry("bpfLogFilters", "all=icmp,eth0=tcp");
        FelixSettings s = FelixSettings.from(lastConfig());
        assertThat(s.failsafeInboundHostPorts()).extracting(p -> p.protocol() + "/" + p.net() + "/" + p.port())
                .containsExactly("tcp/null/22", "udp/fd00::/64/53");
    }

    @Test
    void typedSettingsReadTheResolvedMap() {
        FelixSettings d = FelixSettings.defaults();
        assertThat(d.healthPort()).isEqualTo(9099);
        assertThat(d.healthHost()).isEqualTo("localhost");
        assertThat(d.interfacePrefixes()).containsExactly("cali");
        assertThat(d.ipipEnabled()).isEmpty();
        assertThat(d.vxlanEnabled()).isEmpty();
        assertThat(d.vxlanPort()).isEqualTo(4789);
        assertThat(d.vxlanVni()).isEqualTo(4096);
        assertThat(d.wireguardListeningPort()).isEqualTo(51820);
        assertThat(d.failsafeInboundHostPorts()).hasSize(9);
        assertThat(d.routeRefreshInterval()).hasSeconds(90);
        assertThat(d.iptablesRefreshInterval()).hasSeconds(180);

        start(Map.of("FELIX_VXLANENABLED", "true", "FELIX_VXLANMTU", "1410", "FELIX_BPFENABLED", "true",
                "FELIX_FAILSAFEOUTBOUNDHOSTPORTS", "none", "FELIX_REPORTINGINTERVAL", "1m30s"));
        dispatcher.onUpdates(List.of(set(felixConfig("default", Map.of("ipipEnabled", false, "healthEnabled", true,
                "iptablesLockProbeInterval", "1.5s")))));
        dispatcher.onStatus(SyncerStatus.IN_SYNC);
        FelixSettings s = FelixSettings.from(lastConfig());

        assertThat(s.vxlanEnabled()).contains(true);
        assertThat(s.ipipEnabled()).contains(false);
        assertThat(s.vxlanMtu()).isEqualTo(1410);
        assertThat(s.bpfEnabled()).isTrue();
        assertThat(s.healthEnabled()).isTrue();
        assertThat(s.failsafeOutboundHostPorts()).isEmpty();
        assertThat(s.reportingInterval()).hasSeconds(90);
        assertThat(FelixSettings.GoDurations.parse("1.5s")).hasMillis(1500);
        assertThat(FelixSettings.GoDurations.parse("2h45m")).hasMinutes(165);
    }

    @Test
    void settingsFallBackToDefaultsOnAMapTheResolverDidNotWrite() {
        FelixSettings s = FelixSettings.from(Map.of("healthPort", "oops", "logSeverityScreen", "warning"));
        assertThat(s.healthPort()).isEqualTo(9099);
        assertThat(s.logSeverityScreen()).isEqualTo("Warning");
    }
}
