package calico.cni.spec;

import java.util.Map;

/**
 * One invocation: the {@code CNI_*} environment and the network configuration read from stdin.
 * The environment is the whole environment the runtime passed (the delegated IPAM plugin gets
 * the same).
 */
public record CniRequest(Map<String, String> env, byte[] stdin) {
    public CniRequest {
        env = Map.copyOf(env);
        stdin = stdin == null ? new byte[0] : stdin.clone();
    }

    public String command() {
        return env.getOrDefault("CNI_COMMAND", "");
    }

    /** {@return the variable}, or a code-4 error naming it when it is missing or empty. */
    public String required(String name) {
        String v = env.get(name);
        if (v == null || v.isEmpty()) {
            throw new CniError(CniError.INVALID_ENVIRONMENT, name + ": is required for " + command());
        }
        return v;
    }

    public String optional(String name) {
        String v = env.get(name);
        return v == null || v.isEmpty() ? null : v;
    }
}
