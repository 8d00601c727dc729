package calico.dataplane.nft;

import java.util.Set;

/**
 * What makes a chain a base chain: the kernel calls it from {@code hook} at {@code priority}.
 *
 * @param type     {@code filter}, {@code nat} or {@code route}
 * @param hook     {@code prerouting}, {@code input}, {@code forward}, {@code output}, {@code postrouting}, {@code ingress}
 * @param priority lower runs first (filter is 0, raw is -300, mangle -150)
 * @param policy   {@code accept} or {@code drop}
 */
public record BaseChain(String type, String hook, int priority, String policy) {

    private static final Set<String> TYPES = Set.of("filter", "nat", "route");
    private static final Set<String> HOOKS = Set.of("prerouting", "input", "forward", "output", "postrouting", "ingress", "egress");
    private static final Set<String> POLICIES = Set.of("accept", "drop");

    public BaseChain {
        if (!TYPES.contains(type)) {
            throw new IllegalArgumentException("chain type: must be one of " + TYPES + ", was " + type);
        }
        if (!HOOKS.contains(hook)) {
            throw new IllegalArgumentException("chain hook: must be one of " + HOOKS + ", was " + hook);
        }
        if (!POLICIES.contains(policy)) {
            throw new IllegalArgumentException("chain policy: must be accept or drop, was " + policy);
        }
    }

    /** {@return a filter chain on {@code hook} at priority 0} */
    public static BaseChain filter(String hook, String policy) {
        return new BaseChain("filter", hook, 0, policy);
    }
}
