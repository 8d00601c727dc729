package calico.felix.app;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import calico.libcalico.config.Variables;

/**
 * Felix's local settings (those it needs before it can read the datastore), read from Calico's
 * variables ({@link #fromVariables}). Every error names the setting as {@code felix.<name> (VARIABLE)}
 * and fails start-up.
 *
 * <p>The datastore settings ({@code felix.datastore-type}, {@code felix.etcd-*}, {@code felix.kubeconfig},
 * {@code felix.k8s-api-endpoint}) are libcalico's shared {@link calico.libcalico.datastore.config.DatastoreProperties},
 * read by {@link FelixConfiguration}.
 *
 * <p>Settings FelixConfiguration also holds ({@code logSeverityScreen}, {@code iptablesBackend}, ...) are
 * not here: their {@code FELIX_*} variables are checked at start-up by {@link FelixEnvironment} and read
 * typed from {@link calico.felix.calc.FelixSettings}.
 *
 * @param hostname           this node's name ({@code FELIX_FELIXHOSTNAME}, else {@code HOSTNAME})
 * @param readyPollInitial   first wait between reads of ClusterInformation {@code default} (FELIX_READYPOLLINITIAL, ours)
 * @param readyPollMax       cap of that (doubling) wait (FELIX_READYPOLLMAX, ours)
 * @param applyTimeout       an apply or graph batch running longer than this counts as stalled (FELIX_APPLYTIMEOUT, ours)
 * @param datastoreTimeout   felix is not ready once its source has not answered for this long: the datastore
 *                           (probed every third of it, at most every 10 s), or typha's stream (FELIX_DATASTORETIMEOUT, ours)
 * @param dataplaneDriver    {@code kernel} (the default, as Calico's: the kernel, policy backend from
 *                           FelixConfiguration, and routes) or {@code model} (in-memory, programs nothing;
 *                           only when asked for); {@code iptables} is a synonym of {@code kernel} kept for
 *                           older settings ({@code FELIX_DATAPLANEDRIVERNAME})
 * @param dataplaneNetns     network namespace ({@code /run/netns/<name>}) the kernel dataplane programs;
 *                           empty for felix's own ({@code FELIX_DATAPLANENETNS})
 * @param mtuFilePath        where the kernel dataplane writes the pod MTU for the CNI plugin
 *                           ({@code FELIX_MTUFILEPATH}, ours: Calico's felix always writes
 *                           {@code /var/lib/calico/mtu}, the default); an absolute path
 * @param bpfFsPath          the bpffs the eBPF driver pins its maps on ({@code <path>/calico}), mounted there
 *                           when none is ({@code FELIX_BPFFSPATH}, ours: Calico's felix always uses
 *                           {@code /sys/fs/bpf}, the default); an absolute path
 * @param nftablesNetlinkRules whether the nftables driver sends the batches its netlink encoder covers (a
 *                           policy chain's rewrite) as netlink messages of its own instead of through
 *                           libnftables ({@code FELIX_NFTABLESNETLINKRULES}, ours; on by default, {@code false} turns it off)
 */
public record FelixProperties(
        String hostname,
        Duration readyPollInitial,
        Duration readyPollMax,
        Duration applyTimeout,
        Duration datastoreTimeout,
        String dataplaneDriver,
        String dataplaneNetns,
        String mtuFilePath,
        String bpfFsPath,
        boolean nftablesNetlinkRules) {

    static final List<String> DRIVERS = List.of("model", "kernel", "iptables");

    /**
     * {@return the settings in {@code v}}, Calico's defaults (and ours) for those not set
     *
     * @throws IllegalArgumentException naming the setting, its variable and the reason
     */
    static FelixProperties fromVariables(Variables v) {
        return new FelixProperties(v.or("", "FELIX_FELIXHOSTNAME", "HOSTNAME"),
                v.seconds("felix.ready-poll-initial (FELIX_READYPOLLINITIAL)", Duration.ofMillis(100), "FELIX_READYPOLLINITIAL"),
                v.seconds("felix.ready-poll-max (FELIX_READYPOLLMAX)", Duration.ofSeconds(5), "FELIX_READYPOLLMAX"),
                v.seconds("felix.apply-timeout (FELIX_APPLYTIMEOUT)", Duration.ofSeconds(60), "FELIX_APPLYTIMEOUT"),
                v.seconds("felix.datastore-timeout (FELIX_DATASTORETIMEOUT)", Duration.ofSeconds(30), "FELIX_DATASTORETIMEOUT"),
                v.or("kernel", "FELIX_DATAPLANEDRIVERNAME"), v.or("", "FELIX_DATAPLANENETNS"),
                v.or("/var/lib/calico/mtu", "FELIX_MTUFILEPATH"), v.or("/sys/fs/bpf", "FELIX_BPFFSPATH"),
                bool(v, "felix.nftables-netlink-rules (FELIX_NFTABLESNETLINKRULES)", true, "FELIX_NFTABLESNETLINKRULES"));
    }

    /** {@code true} or {@code false} in any case; {@code described} names the setting in the error. */
    static boolean bool(Variables v, String described, boolean fallback, String name) {
        try {
            return v.bool(name, fallback);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(described + ": \"" + v.first(name) + "\" is not true or false");
        }
    }

    /** {@return whether the kernel dataplane runs} ({@code kernel}, or its synonym {@code iptables}), else the model */
    public boolean kernelDataplane() {
        return !"model".equals(dataplaneDriver);
    }

    public FelixProperties {
        if (hostname == null || hostname.isBlank()) {
            throw new IllegalArgumentException(
                    "felix.hostname (FELIX_FELIXHOSTNAME or HOSTNAME): required, the node's name");
        }
        hostname = hostname.trim();
        positive("felix.ready-poll-initial (FELIX_READYPOLLINITIAL)", readyPollInitial);
        positive("felix.ready-poll-max (FELIX_READYPOLLMAX)", readyPollMax);
        positive("felix.apply-timeout (FELIX_APPLYTIMEOUT)", applyTimeout);
        positive("felix.datastore-timeout (FELIX_DATASTORETIMEOUT)", datastoreTimeout);
        dataplaneDriver = dataplaneDriver == null ? "" : dataplaneDriver.trim().toLowerCase(Locale.ROOT);
        if (!DRIVERS.contains(dataplaneDriver)) {
            throw new IllegalArgumentException("felix.dataplane-driver (FELIX_DATAPLANEDRIVERNAME): \""
                    + dataplaneDriver + "\" is not one of " + String.join(", ", DRIVERS));
        }
        dataplaneNetns = dataplaneNetns == null ? "" : dataplaneNetns.trim();
        if (!dataplaneNetns.isEmpty() && !dataplaneNetns.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("felix.dataplane-netns (FELIX_DATAPLANENETNS): \"" + dataplaneNetns
                    + "\" is not a namespace name (letters, digits, '.', '_', '-')");
        }
        mtuFilePath = mtuFilePath == null || mtuFilePath.isBlank() ? "/var/lib/calico/mtu" : mtuFilePath.trim();
        if (!mtuFilePath.startsWith("/") || mtuFilePath.endsWith("/")) {
            throw new IllegalArgumentException("felix.mtu-file-path (FELIX_MTUFILEPATH): \"" + mtuFilePath
                    + "\" is not an absolute file path");
        }
        bpfFsPath = bpfFsPath == null || bpfFsPath.isBlank() ? "/sys/fs/bpf" : bpfFsPath.trim();
        if (!bpfFsPath.startsWith("/")) {
            throw new IllegalArgumentException("felix.bpf-fs-path (FELIX_BPFFSPATH): \"" + bpfFsPath
                    + "\" is not an absolute path");
        }
    }

    /** {@return the eBPF driver's bpffs mount point} */
    public java.nio.file.Path bpfFs() {
        return java.nio.file.Path.of(bpfFsPath);
    }

    /** {@return the MTU file} */
    public java.nio.file.Path mtuFile() {
        return java.nio.file.Path.of(mtuFilePath);
    }

    private static void positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": must be a positive duration, got " + d);
        }
    }
}
