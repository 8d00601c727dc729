package calico.felix.calc;

import calico.api.model.FelixConfiguration;
import calico.api.model.ResourceKind;
import calico.libcalico.syncer.SyncerStatus;
import calico.libcalico.syncer.Update;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves Felix's effective configuration and emits it whole, typed, as a {@link DataplaneUpdate.ConfigUpdate}.
 *
 * <p>Priority, highest first (Calico's order without the config file, which we do not read):
 * {@code FELIX_*} environment variables, the node's {@code node.<hostname>} FelixConfiguration,
 * the global {@code default} FelixConfiguration, then {@link FelixDefaults}. Each source is read
 * into a layer of valid, normalized values when it changes; an invalid value is logged (once per
 * change of its source, naming the variable or resource and field) and ignored, so the next
 * source down supplies the setting. Nothing here throws on bad input.
 *
 * <p>Like Calico's config batcher, nothing is emitted until the syncer is in sync (so the
 * dataplane never starts on half the datastore's config); after that, a ConfigUpdate is emitted
 * only when the resolved map differs from the one last emitted.
 */
public final class ConfigResolver {

    private static final Logger log = LoggerFactory.getLogger(ConfigResolver.class);

    private final String nodeResourceName;
    private final InfraListener out;
    /** Valid values from the environment; fixed for the life of the process. */
    private final Map<String, String> envLayer;
    /** Valid values of the node's own FelixConfiguration; empty when it does not exist. */
    private Map<String, String> nodeLayer = Map.of();
    /** Valid values of the {@code default} FelixConfiguration; empty when it does not exist. */
    private Map<String, String> globalLayer = Map.of();
    /** Held back until in sync, as Calico does; after that every change is emitted. */
    private boolean inSync;
    /** What the listener was last told; {@code null} before the first emission. */
    private Map<String, String> sent;
    /** The ignored settings last warned about, so that each is logged once per value. */
    private Map<String, String> warned = Map.of();

    public ConfigResolver(String hostname, Map<String, String> environment, InfraListener out) {
        this.nodeResourceName = "node." + hostname;
        this.out = out;
        List<String> problems = new ArrayList<>();
        this.envLayer = readEnvironment(environment, problems);
        problems.forEach(p -> log.warn("Felix configuration: {}; ignored", p));
    }

    public void registerWith(Dispatcher dispatcher) {
        dispatcher.register(ResourceKind.FELIX_CONFIGURATION, this::onUpdate);
        dispatcher.registerStatus(this::onStatus);
    }

    /**
     * {@return one message per invalid {@code FELIX_*} value}, each naming the variable and
     * the reason; empty when every recognised variable is valid. Unrecognised {@code FELIX_*}
     * names (e.g. local-only settings such as {@code FELIX_DATASTORETYPE}) are not errors.
     */
    public static List<String> validateEnvironment(Map<String, String> environment) {
        List<String> problems = new ArrayList<>();
        readEnvironment(environment, problems);
        return List.copyOf(problems);
    }

    /**
     * {@return the settings the environment alone gives}: its valid {@code FELIX_*} values over
     * Calico's defaults (invalid ones are left out, as the resolver leaves them out). What felix
     * runs with before it has read any FelixConfiguration, e.g. its log level at start-up.
     */
    public static FelixSettings environmentSettings(Map<String, String> environment) {
        Map<String, String> values = defaults();
        values.putAll(readEnvironment(environment, new ArrayList<>()));
        return FelixSettings.from(values);
    }

    /** {@return the configuration as resolved now}, whether or not it has been emitted yet. */
    public Map<String, String> resolved() {
        Map<String, String> values = defaults();
        values.putAll(globalLayer);
        values.putAll(nodeLayer);
        values.putAll(envLayer);
        return values;
    }

    /** {@return every emitted field at Calico's default} ("" where Calico has none) */
    private static Map<String, String> defaults() {
        Map<String, String> values = new TreeMap<>();
        for (String field : ConfigFields.EMITTED) {
            values.put(field, FelixDefaults.VALUES.getOrDefault(field, ""));
        }
        return values;
    }

    private void onUpdate(Update update) {
        String name = update.key().name();
        boolean global = name.equals("default");
        if (!global && !name.equals(nodeResourceName)) {
            return; // another node's overrides, or a name Felix does not read
        }
        Map<String, String> layer = Map.of();
        if (update.value() instanceof FelixConfiguration fc && fc.spec() != null) {
            List<String> problems = new ArrayList<>();
            layer = ConfigFields.layer(ConfigFields.print(fc.spec()),
                    field -> "FelixConfiguration " + name + " spec." + field, problems);
            problems.forEach(p -> log.warn("Felix configuration: {}; ignored", p));
        }
        if (global) {
            globalLayer = layer;
        } else {
            nodeLayer = layer;
        }
        maybeEmit();
    }

    private void onStatus(SyncerStatus status) {
        if (status == SyncerStatus.IN_SYNC) {
            inSync = true;
            maybeEmit();
        }
    }

    private void maybeEmit() {
        if (!inSync) {
            return;
        }
        Map<String, String> now = resolved();
        if (now.equals(sent)) {
            return;
        }
        sent = now;
        warnIgnored(now);
        out.onInfraUpdate(new DataplaneUpdate.ConfigUpdate(FelixSettings.from(now)));
    }

    /** Says, once per value, which settings felix does not act on (a FelixConfiguration field accepted silently misleads). */
    private void warnIgnored(Map<String, String> now) {
        java.util.Set<String> fromResources = new java.util.HashSet<>(globalLayer.keySet());
        fromResources.addAll(nodeLayer.keySet());
        fromResources.removeAll(envLayer.keySet());
        Map<String, String> ignored = ConfigSupport.ignored(now, fromResources);
        ignored.forEach((field, value) -> {
            if (!value.equals(warned.get(field))) {
                log.warn("Felix configuration: {} = {} is not supported by this felix and is ignored{}", field, value,
                        ConfigSupport.state(field) == ConfigSupport.State.ENVIRONMENT
                                ? " in a FelixConfiguration (felix reads it from its environment at start-up)"
                                : "");
            }
        });
        warned = ignored;
    }

    /** Aliases first so that, within the environment, Calico's canonical name wins over an alias. */
    private static Map<String, String> readEnvironment(Map<String, String> environment, List<String> problems) {
        Map<String, String> raw = new LinkedHashMap<>();
        Map<String, String> variableOf = new TreeMap<>();
        new TreeMap<>(environment).forEach((variable, value) -> {
            String field = ConfigFields.fieldForEnv(variable);
            if (field == null || !ConfigFields.ENV_ALIASES.containsKey(variable.toUpperCase(java.util.Locale.ROOT))) {
                return;
            }
            raw.put(field, value);
            variableOf.put(field, variable);
        });
        new TreeMap<>(environment).forEach((variable, value) -> {
            String field = ConfigFields.fieldForEnv(variable);
            if (field == null || ConfigFields.ENV_ALIASES.containsKey(variable.toUpperCase(java.util.Locale.ROOT))) {
                return;
            }
            raw.put(field, value);
            variableOf.put(field, variable);
        });
        return Map.copyOf(ConfigFields.layer(raw, field -> variableOf.get(field) + " (" + field + ")", problems));
    }
}
