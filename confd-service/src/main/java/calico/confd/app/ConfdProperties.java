package calico.confd.app;

import calico.libcalico.config.LogSeverity;
import calico.libcalico.config.Variables;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * confd's settings, read from calico-node's variables ({@link #fromVariables}); errors name a setting
 * as {@code confd.<name> (VARIABLE)}. Names marked (ours) are not Calico's: Calico hard-codes those
 * paths. The datastore settings (DATASTORE_TYPE, ETCD_*, KUBECONFIG, K8S_API_ENDPOINT) are libcalico's
 * shared {@link calico.libcalico.datastore.config.DatastoreProperties}, read by {@link ConfdConfiguration}.
 *
 * @param nodename          this node's name (NODENAME, else HOSTNAME)
 * @param networkingBackend {@code bird} runs confd; {@code vxlan}/{@code none} leave BGP off (CALICO_NETWORKING_BACKEND)
 * @param birdSocket        BIRD's control socket (CALICO_BIRD_SOCKET, ours; Calico: /var/run/calico/bird.ctl)
 * @param birdConfig        the file BIRD reads (CALICO_BIRD_CONFIG, ours; Calico: /etc/calico/confd/config/bird.cfg)
 * @param birdBinary        the BIRD used for {@code bird -p} (CALICO_BIRD_BINARY, ours)
 * @param routerId          an IPv4 address, {@code hash}, or empty for the node's IPv4 (CALICO_ROUTER_ID)
 * @param secretsDir        mounted secrets, {@code <dir>/<name>/<key>}, for BGP passwords (CALICO_BGP_SECRETS_DIR, ours);
 *                          without it, the kubernetes datastore reads Secrets from the API
 * @param namespace         calico-node's namespace, where password Secrets live (NAMESPACE, kube-system)
 * @param resyncInterval    render this often even without changes, and retry reloads (CALICO_CONFD_RESYNC_INTERVAL, ours, seconds)
 * @param peerPollInterval  ask BIRD for peer states this often (CALICO_CONFD_PEER_POLL_INTERVAL, ours, seconds)
 * @param logSeverity       confd's log level when set (BGP_LOGSEVERITYSCREEN, as Calico's confd reads it); {@code null}:
 *                          the BGPConfiguration's {@code logSeverityScreen} decides ({@link ConfdLogLevel})
 */
public record ConfdProperties(
        String nodename,
        String networkingBackend,
        Path birdSocket,
        Path birdConfig,
        String birdBinary,
        String routerId,
        String secretsDir,
        String namespace,
        Duration resyncInterval,
        Duration peerPollInterval,
        LogSeverity logSeverity) {

    /**
     * {@return the settings in {@code variables}} (the process environment, or a test's), Calico's
     * defaults for those not set
     *
     * @throws IllegalArgumentException naming the setting, its variable and the reason
     */
    public static ConfdProperties fromVariables(Map<String, String> variables) {
        Variables v = new Variables(variables);
        return new ConfdProperties(v.or("", "NODENAME", "HOSTNAME"), v.or("bird", "CALICO_NETWORKING_BACKEND"),
                Path.of(v.or("/var/run/calico/bird.ctl", "CALICO_BIRD_SOCKET")),
                Path.of(v.or("/etc/calico/confd/config/bird.cfg", "CALICO_BIRD_CONFIG")),
                v.or("/usr/sbin/bird", "CALICO_BIRD_BINARY"), v.or("", "CALICO_ROUTER_ID"),
                v.first("CALICO_BGP_SECRETS_DIR"), v.or("kube-system", "NAMESPACE"),
                v.seconds("confd.resync-interval (CALICO_CONFD_RESYNC_INTERVAL)", Duration.ofSeconds(30),
                        "CALICO_CONFD_RESYNC_INTERVAL"),
                v.seconds("confd.peer-poll-interval (CALICO_CONFD_PEER_POLL_INTERVAL)", Duration.ofSeconds(5),
                        "CALICO_CONFD_PEER_POLL_INTERVAL"),
                LogSeverity.fromVariable("confd.log-severity-screen (BGP_LOGSEVERITYSCREEN)",
                        v.first("BGP_LOGSEVERITYSCREEN")));
    }

    public ConfdProperties {
        networkingBackend = networkingBackend == null ? "bird" : networkingBackend.trim().toLowerCase(Locale.ROOT);
        if (!List.of("bird", "vxlan", "none").contains(networkingBackend)) {
            throw new IllegalArgumentException("confd.networking-backend (CALICO_NETWORKING_BACKEND): \""
                    + networkingBackend + "\" is not one of bird, vxlan, none");
        }
        if (bgpEnabled(networkingBackend) && (nodename == null || nodename.isBlank())) {
            throw new IllegalArgumentException("confd.nodename (NODENAME or HOSTNAME): required, it names the Node "
                    + "resource whose BGP configuration is rendered");
        }
        if (resyncInterval.isNegative() || resyncInterval.isZero()) {
            throw new IllegalArgumentException("confd.resync-interval (CALICO_CONFD_RESYNC_INTERVAL): must be positive");
        }
        if (peerPollInterval.isNegative() || peerPollInterval.isZero()) {
            throw new IllegalArgumentException("confd.peer-poll-interval (CALICO_CONFD_PEER_POLL_INTERVAL): must be "
                    + "positive");
        }
    }

    private static boolean bgpEnabled(String backend) {
        return "bird".equals(backend);
    }

    /** {@return whether BGP runs on this node} ({@code CALICO_NETWORKING_BACKEND=bird}) */
    public boolean bgpEnabled() {
        return bgpEnabled(networkingBackend);
    }
}
