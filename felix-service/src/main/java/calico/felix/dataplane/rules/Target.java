package calico.felix.dataplane.rules;

import java.util.Objects;

/** What a {@link GenericRule} does when its matches hold. */
public sealed interface Target {

    record Accept() implements Target {
    }

    record Drop() implements Target {
    }

    /** Back to the calling chain. */
    record Return() implements Target {
    }

    /** Call {@code chain}; on its return carry on with the next rule. */
    record Jump(String chain) implements Target {
        public Jump {
            Objects.requireNonNull(chain, "chain");
        }
    }

    /** Continue in {@code chain}; its return goes to our caller. */
    record Goto(String chain) implements Target {
        public Goto {
            Objects.requireNonNull(chain, "chain");
        }
    }

    /** Set {@code bits} in the packet mark, leaving other bits alone; non-terminal. */
    record SetMark(long bits) implements Target {
    }

    /** Clear {@code bits} in the packet mark, leaving other bits alone; non-terminal. */
    record ClearMark(long bits) implements Target {
    }

    /** Log the packet with {@code prefix}; non-terminal. */
    record Log(String prefix) implements Target {
    }

    /**
     * Copy the packet's headers to userspace on NFLOG {@code group} with {@code prefix} (at most
     * 63 bytes: the kernel's limit); non-terminal. Flow logs' rule hits.
     */
    record Nflog(int group, String prefix) implements Target {
        public Nflog {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.isEmpty() || prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 63) {
                throw new IllegalArgumentException("nflog prefix: 1..63 bytes, was '" + prefix + "'");
            }
            if (group < 0 || group > 65535) {
                throw new IllegalArgumentException("nflog group: 0..65535, was " + group);
            }
        }
    }

    /**
     * Source NAT to the outgoing interface's address (nat table, postrouting only).
     *
     * @param minPort     with {@code maxPort}, the source ports to map to (TCP and UDP rules only); 0: the
     *                    kernel's choice
     * @param fullyRandom the port is chosen at random for each connection (iptables {@code --random-fully},
     *                    nftables {@code fully-random}): avoids clashes between connections masqueraded at once
     */
    record Masquerade(int minPort, int maxPort, boolean fullyRandom) implements Target {
        public Masquerade {
            if (minPort < 0 || maxPort > 65535 || minPort > maxPort || (minPort == 0) != (maxPort == 0)) {
                throw new IllegalArgumentException("masquerade ports: none (0, 0) or 1 <= min <= max <= 65535, was "
                        + minPort + "-" + maxPort);
            }
        }

        /** Any port, the kernel's choice. */
        public Masquerade() {
            this(0, 0, false);
        }

        /** {@return whether the ports are restricted} */
        public boolean hasPorts() {
            return maxPort > 0;
        }
    }

    /** Destination NAT to {@code address} (nat table, prerouting and output): a floating IP's DNAT. */
    record Dnat(String address) implements Target {
        public Dnat {
            java.util.Objects.requireNonNull(address, "address");
        }
    }

    /** Source NAT to {@code address} (nat table, postrouting): a floating IP's SNAT. */
    record Snat(String address) implements Target {
        public Snat {
            java.util.Objects.requireNonNull(address, "address");
        }
    }

    /** Refuse: an ICMP unreachable (TCP: a reset) back to the sender, then drop. Filter table only. */
    record Reject() implements Target {
    }

    /** Do not track the packet's connection (raw table only); non-terminal. */
    record NoTrack() implements Target {
    }

    Target ACCEPT = new Accept();
    Target DROP = new Drop();
    Target RETURN = new Return();
    Target REJECT = new Reject();
}
