package calico.dataplane.netfilter;

import calico.dataplane.netlink.Sysctls;

/**
 * The conntrack sysctls flow collection depends on, written through {@link Sysctls} (so, like
 * it, they act on the network namespace of the calling thread).
 *
 * <ul>
 *   <li>{@code net.netfilter.nf_conntrack_acct=1}: per-direction packet and byte counters. The
 *       kernel attaches counters to a connection when it is created, so connections that began
 *       before accounting was turned on report 0 for their whole life.</li>
 *   <li>{@code net.netfilter.nf_conntrack_events=1}: events for every connection. The default
 *       (2 on recent kernels) only prepares connections for events while some socket listens,
 *       so a connection that began before {@link ConntrackReader#subscribeDestroyed} was called
 *       ends without a DESTROY event.</li>
 * </ul>
 */
public final class ConntrackSettings {
    static final String ACCT = "net/netfilter/nf_conntrack_acct";
    static final String EVENTS = "net/netfilter/nf_conntrack_events";

    private final Sysctls sysctls;

    public ConntrackSettings() {
        this(new Sysctls());
    }

    public ConntrackSettings(Sysctls sysctls) {
        this.sysctls = sysctls;
    }

    /** Turns on per-connection counters for connections created from now on. */
    public void enableAccounting() {
        sysctls.write(ACCT, "1");
    }

    /** {@return whether connections created now get counters} */
    public boolean accountingEnabled() {
        return "1".equals(sysctls.read(ACCT));
    }

    /** Makes every connection created from now on produce events, listener or not. */
    public void enableEvents() {
        sysctls.write(EVENTS, "1");
    }
}
