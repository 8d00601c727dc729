package calico.node.startup.steps;

import calico.api.model.ASNumber;
import calico.node.startup.autodetect.AutodetectionMethod;
import java.util.Objects;

/**
 * What start-up writes into this node's Node resource.
 *
 * @param nodeName           the Calico Node's name ({@code NODENAME}, else the host name), lower case
 * @param kubernetesNodeName the Kubernetes Node it is ({@code CALICO_K8S_NODE_REF}, else {@code nodeName});
 *                           read for {@code kubernetes-internal-ip}
 * @param orchestratorRef    whether {@code CALICO_K8S_NODE_REF} was set (then the Node gets that orchRef)
 * @param ipv4               {@code IP}
 * @param ipv6               {@code IP6}
 * @param ipv4Method         {@code IP_AUTODETECTION_METHOD}
 * @param ipv6Method         {@code IP6_AUTODETECTION_METHOD}
 * @param asNumber           {@code AS}; null keeps the Node's (or the global one)
 * @param policyOnly         {@code CALICO_NETWORKING_BACKEND=none}: no addresses or AS are written
 * @param checkConflicts     whether another Node with the same address stops start-up
 *                           ({@code DISABLE_NODE_IP_CHECK} turns it off)
 * @param wireguardHostEncryption {@code FELIX_WIREGUARDHOSTENCRYPTIONENABLED}: the WireGuard device uses the
 *                           node's own address, so no WireGuard tunnel address is allocated
 */
public record NodeSettings(String nodeName, String kubernetesNodeName, boolean orchestratorRef,
                           AddressSetting ipv4, AddressSetting ipv6, AutodetectionMethod ipv4Method,
                           AutodetectionMethod ipv6Method, ASNumber asNumber, boolean policyOnly,
                           boolean checkConflicts, boolean wireguardHostEncryption) {

    public NodeSettings {
        Objects.requireNonNull(nodeName, "nodeName");
        Objects.requireNonNull(kubernetesNodeName, "kubernetesNodeName");
        Objects.requireNonNull(ipv4, "ipv4");
        Objects.requireNonNull(ipv6, "ipv6");
        Objects.requireNonNull(ipv4Method, "ipv4Method");
        Objects.requireNonNull(ipv6Method, "ipv6Method");
    }
}
