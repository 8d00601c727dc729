package calico.felix.dataplane.rules;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One backend-neutral match criterion of a {@link GenericRule}. A rule's matches are ANDed.
 * The iptables and nftables formatters each turn every variant into their own syntax; nothing
 * here is specific to either.
 *
 * <p>IP set references carry the calculation graph's set ID (or a driver-made set's ID from
 * {@link Ruleset#driverSets()}); formatters map IDs to kernel names per family with
 * {@link Names}.
 */
public sealed interface Match {

    /** Which address or port of the packet a match looks at. */
    enum Dir { SRC, DST }

    /** Conntrack states used by the endpoint chains. */
    enum CtState { INVALID, NEW, RELATED, ESTABLISHED }

    /**
     * The packet's family: only added when a rule needs it and nothing else in the rule implies it
     * (an nftables {@code inet} chain serves both families; an iptables formatter, which renders one
     * family per table, drops this match).
     */
    record Family(IpFamily family) implements Match {
    }

    /** Incoming ({@code in}) or outgoing interface; {@code prefix} matches every name starting with {@code name}. */
    record Interface(boolean in, String name, boolean prefix) implements Match {
        public Interface {
            Objects.requireNonNull(name, "name");
        }
    }

    /** A protocol by lower-case name ({@code tcp}, {@code udp}, {@code icmp}, {@code ipv6-icmp}, {@code sctp}, ...) or number. */
    record Protocol(String name, boolean negated) implements Match {
    }

    /** ICMP (family V4) or ICMPv6 (V6) type, optionally with a code. */
    record Icmp(IpFamily family, int type, Integer code, boolean negated) implements Match {
    }

    /**
     * The address is in one of {@code cidrs} (all of one family), or with {@code negated} in none.
     * Several nets: iptables makes a driver set, nftables an anonymous set.
     */
    record Nets(Dir dir, List<String> cidrs, boolean negated) implements Match {
        public Nets {
            cidrs = List.copyOf(cidrs);
            if (cidrs.isEmpty()) {
                throw new IllegalArgumentException("Nets needs at least one CIDR");
            }
        }
    }

    /** The address is in the IP set {@code setId} of {@code family} (or with {@code negated}, is not). */
    record InSet(Dir dir, IpFamily family, String setId, boolean negated) implements Match {
    }

    /**
     * The port is one of {@code ports} ({@code "80"} or a range {@code "1000:2000"}); the rule
     * also carries a TCP/UDP/SCTP protocol match. Negated: none of them.
     */
    record Ports(Dir dir, List<String> ports, boolean negated) implements Match {
        public Ports {
            ports = List.copyOf(ports);
        }
    }

    /** (address, protocol, port) is in the named-port set {@code setId} of {@code family}. */
    record NamedPortSet(Dir dir, IpFamily family, String setId, boolean negated) implements Match {
    }

    /** Every bit of {@code bits} is set in the packet mark. */
    record MarkAllSet(long bits) implements Match {
    }

    /** Every bit of {@code bits} is clear in the packet mark. */
    record MarkAllClear(long bits) implements Match {
    }

    /** The packet mark's {@code mask} bits equal {@code value} (a value of several bits, e.g. an endpoint mark). */
    record MarkEquals(long value, long mask) implements Match {
        public MarkEquals {
            if ((value & ~mask) != 0) {
                throw new IllegalArgumentException("mark value 0x" + Long.toHexString(value)
                        + " has bits outside its mask 0x" + Long.toHexString(mask));
            }
        }
    }

    /** At least one bit of {@code bits} is set in the packet mark. */
    record MarkAnySet(long bits) implements Match {
    }

    /** The connection is in one of {@code states}. */
    record Conntrack(Set<CtState> states) implements Match {
        public Conntrack {
            states = Set.copyOf(states);
        }
    }

    /** The destination address is one of this host's own (iptables {@code addrtype LOCAL}, nft {@code fib daddr type local}). */
    record DstLocal(boolean negated) implements Match {
    }

    /**
     * The connection was (or with {@code negated}, was not) destination-NATed: iptables
     * {@code -m conntrack --ctstate DNAT}, nft {@code ct status dnat}.
     */
    record ConntrackDnat(boolean negated) implements Match {
    }

    /**
     * The strict reverse-path check fails: a route lookup for the source address (with the
     * packet's mark) would not leave by the interface the packet came in on. iptables
     * {@code -m rpfilter --validmark --invert}, nft {@code fib saddr . mark . iif oif missing}.
     * Raw or mangle PREROUTING only.
     */
    record ReversePathFails() implements Match {
    }
}
