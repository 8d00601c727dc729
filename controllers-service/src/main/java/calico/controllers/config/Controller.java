package calico.controllers.config;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** The controllers Calico's kube-controllers can run, with their {@code ENABLED_CONTROLLERS} names. */
public enum Controller {
    NODE("node"),
    POLICY("policy"),
    WORKLOAD_ENDPOINT("workloadendpoint"),
    SERVICE_ACCOUNT("serviceaccount"),
    NAMESPACE("namespace"),
    LOAD_BALANCER("loadbalancer");

    private final String envName;

    Controller(String envName) {
        this.envName = envName;
    }

    /** {@return the name {@code ENABLED_CONTROLLERS} lists} */
    public String envName() {
        return envName;
    }

    /** {@return the controller an {@code ENABLED_CONTROLLERS} entry names}; {@code profile} is Calico's old name of namespace. */
    public static Optional<Controller> byEnvName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        if (n.equals("profile")) {
            return Optional.of(NAMESPACE);
        }
        return Arrays.stream(values()).filter(c -> c.envName.equals(n)).findFirst();
    }
}
