package calico.dataplane.bpf;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Java side of {@code src/main/bpf/calico_policy.h}: every map's name and the byte layout of
 * its keys and values, in one place (change both together; {@code PolicyProgramTest} reads
 * entries back through the kernel). Integers are in host (little-endian) order; addresses, and
 * the set ID that prefixes an LPM key, in network order. Both families share every map: a key's
 * family ({@link #FAMILY_V4}, {@link #FAMILY_V6}) says which bytes of its 16-byte address field
 * count (IPv4: the first 4, the rest 0).
 */
public final class PolicyMaps {

    public static final String ENDPOINTS = "cali_eps";
    /** 2: the rule's layout version (it gained {@code hit}). */
    public static final String RULES = "cali_rules2";
    /** 2: the key gained the family and a 16-byte address. */
    public static final String SETS = "cali_sets2";
    /** 2: as {@link #SETS}. */
    public static final String NAMED_PORTS = "cali_nports2";
    /** The layout version is in the name: a pin of an older layout is another map (felix removes it). 4: both families. */
    public static final String CONNTRACK = "cali_ct4";
    /** Flow-log prefixes by ID: {@code __u32} → {@code char[64]}, NUL-padded. */
    public static final String PREFIXES = "cali_prefixes";
    /** The ring buffer of flow events ({@code struct cali_event}); 2: events carry the family. */
    public static final String EVENTS = "cali_events2";
    /** The programs' settings: one entry, {@code struct cali_cfg}. */
    public static final String CONFIG = "cali_cfg";
    /** Idle timeouts by conntrack state ({@code bpfConntrackTimeouts}): {@code __u32} state → {@code __u32} seconds, 0: the default. */
    public static final String CT_TIMEOUTS = "cali_ct_timeouts";
    /**
     * Nets by interface (workload programs only), keyed as {@link #SETS} with the ifindex for the set ID
     * ({@link #ifnetKey}): a workload's allowed spoofed sources; under {@link #IFNETS_SERVICES} the service ranges.
     */
    public static final String IFNETS = "cali_ifnets";
    /** The "interface" of {@link #IFNETS} whose nets are the service ranges {@code serviceLoopPrevention} guards. */
    public static final int IFNETS_SERVICES = 0;
    /** Every map the policy program pins, by name. */
    public static final List<String> ALL = List.of(ENDPOINTS, RULES, SETS, NAMED_PORTS, CONNTRACK, PREFIXES, EVENTS,
            CONFIG, CT_TIMEOUTS, IFNETS);
    /** The conntrack map's size when none is given (the compiled one; felix passes {@code bpfMapSizeConntrack}). */
    public static final int CONNTRACK_DEFAULT_SIZE = 524288;
    /** {@code cali_cfg.flags}: strict reverse-path check of a workload's source. */
    public static final int CFG_RPF = 1;
    /** {@code cali_cfg.flags}: a workload's new flows to the host itself are dropped. */
    public static final int CFG_HOST_DROP = 2;
    /** {@code cali_cfg.flags}: a policy deny answers with an ICMP port unreachable instead of dropping. */
    public static final int CFG_REJECT = 4;
    /** {@code cali_cfg.flags}: forwarded traffic to a workload still addressed to a service range is dropped. */
    public static final int CFG_SVC_LOOP = 8;
    /** {@code cali_cfg.flags}: with {@link #CFG_SVC_LOOP}, answered with an ICMP port unreachable instead. */
    public static final int CFG_SVC_REJECT = 16;

    /** calico_policy.h limits. */
    public static final int MAX_RULES = 4096;
    public static final int RULE_SETS = 8;
    public static final int RULE_PORTS = 16;
    public static final int RULE_SIZE = 216;
    public static final int EVENT_HITS = 8;
    public static final int PREFIX_LEN = 64;
    static final int EVENT_SIZE = 84;
    /** Key sizes of {@link #SETS} and {@link #NAMED_PORTS}. */
    public static final int LPM_KEY_SIZE = 28;
    public static final int NAMED_PORT_KEY_SIZE = 24;
    /** The families of keys and events, and of a rule that matches one family only. */
    public static final int FAMILY_V4 = 4;
    public static final int FAMILY_V6 = 6;

    private PolicyMaps() {
    }

    /**
     * A table of an interface ({@code cali_eps}' dir), the tc hook that walks it and the program there:
     * a workload's two directions, or one of a host endpoint's tables ({@code CALI_TABLE_HEP_*}).
     */
    public enum Dir {
        /** Towards the workload: its ingress policy, on the host side's tc egress. */
        TO_ENDPOINT(0, TcDirection.EGRESS, "calico_to_ep"),
        /** From the workload: its egress policy, on the host side's tc ingress. */
        FROM_ENDPOINT(1, TcDirection.INGRESS, "calico_from_ep"),
        /** A host endpoint, arriving for the host itself: inbound failsafes, ingress policy, profiles, deny. */
        HEP_IN(2, TcDirection.INGRESS, "calico_hep_in"),
        /** A host endpoint, the host's own traffic leaving: outbound failsafes, egress policy, profiles, deny. */
        HEP_OUT(3, TcDirection.EGRESS, "calico_hep_out"),
        /** A host endpoint, arriving to be forwarded: its applyOnForward ingress policy. */
        HEP_FWD_IN(4, TcDirection.INGRESS, "calico_hep_in"),
        /** A host endpoint, forwarded traffic leaving: its applyOnForward egress policy. */
        HEP_FWD_OUT(5, TcDirection.EGRESS, "calico_hep_out"),
        /** A host endpoint's doNotTrack ingress policy (no verdict: on to conntrack and the rest). */
        HEP_UNTRACKED_IN(6, TcDirection.INGRESS, "calico_hep_in"),
        /** A host endpoint's doNotTrack egress policy. */
        HEP_UNTRACKED_OUT(7, TcDirection.EGRESS, "calico_hep_out"),
        /** A host endpoint's preDNAT ingress policy (no verdict: on to the normal tables). */
        HEP_PRE_DNAT_IN(8, TcDirection.INGRESS, "calico_hep_in");

        /** The programs of a workload interface, one per hook. */
        public static final List<Dir> WORKLOAD = List.of(TO_ENDPOINT, FROM_ENDPOINT);
        /** The programs of a host endpoint's interface, one per hook. */
        public static final List<Dir> HOST = List.of(HEP_OUT, HEP_IN);

        static Dir of(int code) {
            for (Dir d : values()) {
                if (d.code == code) {
                    return d;
                }
            }
            throw new IllegalArgumentException("table " + code);
        }

        public final int code;
        public final TcDirection hook;
        public final String program;

        Dir(int code, TcDirection hook, String program) {
            this.code = code;
            this.hook = hook;
            this.program = program;
        }
    }

    public enum Action {
        ALLOW(1), DENY(2),
        /** Continue at the rule's {@code jump} index (a Pass, or the end of a profile that decided nothing). */
        JUMP(3),
        /** A Log rule: the packet is written to the trace pipe and the walk goes on (as Calico's eBPF Log). */
        LOG(4);

        final int code;

        Action(int code) {
            this.code = code;
        }

        static Action of(int code) {
            for (Action a : values()) {
                if (a.code == code) {
                    return a;
                }
            }
            throw new IllegalArgumentException("rule action " + code);
        }
    }

    public enum SetKind { NET, NAMED_PORT }

    public enum PortKind { SRC, DST, NOT_SRC, NOT_DST }

    /** A set test: the source or destination address (with the port, for named ports) is, or is not, in set {@code id}. */
    public record SetRef(int id, SetKind kind, boolean dst, boolean negated) {
        public SetRef {
            Objects.requireNonNull(kind, "kind");
        }
    }

    /** A port range test; ranges of one positive kind are ORed, negated ones must all miss. */
    public record PortRef(int lo, int hi, PortKind kind) {
        public PortRef {
            if (lo < 0 || hi > 65535 || lo > hi) {
                throw new IllegalArgumentException("port range " + lo + ":" + hi);
            }
            Objects.requireNonNull(kind, "kind");
        }
    }

    /**
     * One entry of an endpoint direction's rule table: ANDed tests (null fields: no test) and an
     * action; {@code jump} is the next index for {@link Action#JUMP} (forward only); {@code family}
     * {@link #FAMILY_V4} or {@link #FAMILY_V6} matches that family's packets only (0: both; an ICMP
     * test then means the packet's family's ICMP).
     */
    public record Rule(Action action, Integer proto, Integer notProto, Integer icmpType, Integer icmpCode,
                       Integer notIcmpType, Integer notIcmpCode, int jump, List<SetRef> sets, List<PortRef> ports,
                       int hit, int family) {
        /** A rule of both families that logs nothing. */
        public Rule(Action action, Integer proto, Integer notProto, Integer icmpType, Integer icmpCode,
                    Integer notIcmpType, Integer notIcmpCode, int jump, List<SetRef> sets, List<PortRef> ports) {
            this(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, jump, sets, ports, 0, 0);
        }

        /** {@return this rule logging under prefix ID {@code id}} (0: nothing) */
        public Rule withHit(int id) {
            return new Rule(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, jump, sets, ports, id,
                    family);
        }

        /** {@return this rule jumping to {@code to}} */
        public Rule withJump(int to) {
            return new Rule(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, to, sets, ports, hit,
                    family);
        }

        /** {@return this rule matching packets of {@code f} only} ({@link #FAMILY_V4}, {@link #FAMILY_V6}; 0: both) */
        public Rule withFamily(int f) {
            return new Rule(action, proto, notProto, icmpType, icmpCode, notIcmpType, notIcmpCode, jump, sets, ports, hit,
                    f);
        }

        public Rule {
            Objects.requireNonNull(action, "action");
            if (family != 0 && family != FAMILY_V4 && family != FAMILY_V6) {
                throw new IllegalArgumentException("rule family: 0, 4 or 6, got " + family);
            }
            sets = List.copyOf(sets);
            ports = List.copyOf(ports);
            if (sets.size() > RULE_SETS) {
                throw new IllegalArgumentException("a BPF rule holds at most " + RULE_SETS + " set tests, this one "
                        + sets.size());
            }
            if (ports.size() > RULE_PORTS) {
                throw new IllegalArgumentException("a BPF rule holds at most " + RULE_PORTS + " port ranges, this one "
                        + ports.size());
            }
        }

        /** An unconditional rule. */
        public static Rule always(Action action, int jump) {
            return new Rule(action, null, null, null, null, null, null, jump, List.of(), List.of());
        }
    }

    // ---- encoding

    public static byte[] endpointKey(int ifindex, Dir dir) {
        return le(8).putInt(ifindex).putInt(dir.code).array();
    }

    /** An endpoint key's fields: ifindex and direction. */
    public record EndpointKey(int ifindex, Dir dir) {
    }

    public static EndpointKey decodeEndpointKey(byte[] k) {
        ByteBuffer b = ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN);
        int ifindex = b.getInt();
        return new EndpointKey(ifindex, Dir.of(b.getInt()));
    }

    public static byte[] endpointValue(int gen, int len) {
        return le(8).putInt(gen).putInt(len).array();
    }

    /** {@return (gen, len)} of an endpoint value */
    public static int[] decodeEndpointValue(byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        return new int[] {b.getInt(), b.getInt()};
    }

    public static byte[] ruleKey(int ifindex, Dir dir, int gen, int index) {
        return le(12).putInt(ifindex).putShort((short) dir.code).putShort((short) gen).putInt(index).array();
    }

    /** A rule key's fields: ifindex, dir code, gen, index. */
    public static int[] decodeRuleKey(byte[] k) {
        ByteBuffer b = ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN);
        return new int[] {b.getInt(), Short.toUnsignedInt(b.getShort()), Short.toUnsignedInt(b.getShort()), b.getInt()};
    }

    public static byte[] rule(Rule r) {
        ByteBuffer b = le(RULE_SIZE);
        int flags = 0;
        b.put((byte) r.action().code);
        b.put(u8(r.proto()));
        b.put(u8(r.notProto()));
        b.put(u8(r.icmpType()));
        b.put(u8(r.icmpCode()));
        b.put(u8(r.notIcmpType()));
        b.put(u8(r.notIcmpCode()));
        b.put((byte) 0);
        flags |= r.proto() != null ? 1 : 0;
        flags |= r.notProto() != null ? 1 << 1 : 0;
        flags |= r.icmpType() != null ? 1 << 2 : 0;
        flags |= r.icmpCode() != null ? 1 << 3 : 0;
        flags |= r.notIcmpType() != null ? 1 << 4 : 0;
        flags |= r.notIcmpCode() != null ? 1 << 5 : 0;
        flags |= r.family() == FAMILY_V4 ? 1 << 6 : r.family() == FAMILY_V6 ? 1 << 7 : 0;
        b.putInt(flags);
        b.putInt(r.jump());
        for (int i = 0; i < RULE_SETS; i++) {
            if (i < r.sets().size()) {
                SetRef s = r.sets().get(i);
                b.putInt(s.id()).put((byte) (s.kind() == SetKind.NET ? 1 : 2)).put((byte) (s.dst() ? 1 : 0))
                        .put((byte) (s.negated() ? 1 : 0)).put((byte) 0);
            } else {
                b.putLong(0);
            }
        }
        for (int i = 0; i < RULE_PORTS; i++) {
            if (i < r.ports().size()) {
                PortRef p = r.ports().get(i);
                b.putShort((short) p.lo()).putShort((short) p.hi()).put((byte) (p.kind().ordinal() + 1))
                        .put(new byte[3]);
            } else {
                b.putLong(0);
            }
        }
        b.putInt(r.hit()).putInt(0);
        return b.array();
    }

    public static Rule decodeRule(byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        int action = b.get();
        int[] f = new int[6];
        for (int i = 0; i < 6; i++) {
            f[i] = Byte.toUnsignedInt(b.get());
        }
        b.get();
        int flags = b.getInt();
        int jump = b.getInt();
        List<SetRef> sets = new ArrayList<>();
        for (int i = 0; i < RULE_SETS; i++) {
            int id = b.getInt();
            int kind = b.get();
            int dst = b.get();
            int neg = b.get();
            b.get();
            if (kind != 0) {
                sets.add(new SetRef(id, kind == 1 ? SetKind.NET : SetKind.NAMED_PORT, dst != 0, neg != 0));
            }
        }
        List<PortRef> ports = new ArrayList<>();
        for (int i = 0; i < RULE_PORTS; i++) {
            int lo = Short.toUnsignedInt(b.getShort());
            int hi = Short.toUnsignedInt(b.getShort());
            int kind = b.get();
            b.get(new byte[3]);
            if (kind != 0) {
                ports.add(new PortRef(lo, hi, PortKind.values()[kind - 1]));
            }
        }
        int family = (flags & (1 << 6)) != 0 ? FAMILY_V4 : (flags & (1 << 7)) != 0 ? FAMILY_V6 : 0;
        return new Rule(Action.of(action), flag(flags, 0, f[0]), flag(flags, 1, f[1]), flag(flags, 2, f[2]),
                flag(flags, 3, f[3]), flag(flags, 4, f[4]), flag(flags, 5, f[5]), jump, sets, ports, b.getInt(), family);
    }

    /** The key of {@code cali_cfg}'s one entry. */
    public static byte[] configKey() {
        return le(4).putInt(0).array();
    }

    public static byte[] configValue(int flags) {
        return le(4).putInt(flags).array();
    }

    public static byte[] prefixKey(int id) {
        return le(4).putInt(id).array();
    }

    /** A prefix as the map holds it: its UTF-8 bytes, NUL-padded to 64 (a longer one is refused). */
    public static byte[] prefixValue(String prefix) {
        byte[] p = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (p.length >= PREFIX_LEN) {
            throw new IllegalArgumentException("a flow-log prefix holds at most " + (PREFIX_LEN - 1) + " bytes: " + prefix);
        }
        return java.util.Arrays.copyOf(p, PREFIX_LEN);
    }

    public static String decodePrefix(byte[] v) {
        int n = 0;
        while (n < v.length && v[n] != 0) {
            n++;
        }
        return new String(v, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * A flow event: the first packet of a flow walked {@code dir}'s table on {@code ifindex};
     * {@code hits} are the prefix IDs logged on the way (Passes, then the verdict's).
     */
    public record FlowEvent(int ifindex, Dir dir, Action verdict, int proto, InetAddress src, InetAddress dst,
                            int srcPort, int dstPort, int length, List<Integer> hits) {
    }

    public static FlowEvent decodeEvent(byte[] e) {
        ByteBuffer b = ByteBuffer.wrap(e).order(ByteOrder.LITTLE_ENDIAN);
        int ifindex = b.getInt();
        int dir = b.get();
        int verdict = b.get();
        int proto = Byte.toUnsignedInt(b.get());
        int n = Math.min(EVENT_HITS, Byte.toUnsignedInt(b.get()));
        int family = b.get();
        b.position(b.position() + 3);
        byte[] s = new byte[16];
        byte[] d = new byte[16];
        b.get(s).get(d);
        int sport = Short.toUnsignedInt(b.getShort());
        int dport = Short.toUnsignedInt(b.getShort());
        int len = b.getInt();
        List<Integer> hits = new ArrayList<>();
        for (int i = 0; i < EVENT_HITS; i++) {
            int h = b.getInt();
            if (i < n) {
                hits.add(h);
            }
        }
        return new FlowEvent(ifindex, dir == 0 ? Dir.TO_ENDPOINT : Dir.FROM_ENDPOINT, Action.of(verdict), proto,
                inet(family, s), inet(family, d), sport, dport, len, List.copyOf(hits));
    }

    /** An LPM key for member {@code address/prefix} (either family) of set {@code setId}. */
    public static byte[] lpmKey(int setId, InetAddress address, int prefix) {
        int max = address.getAddress().length * 8;
        if (prefix < 0 || prefix > max) {
            throw new IllegalArgumentException((max == 32 ? "IPv4" : "IPv6") + " prefix length " + prefix);
        }
        return le(LPM_KEY_SIZE).putInt(64 + prefix).order(ByteOrder.BIG_ENDIAN).putInt(setId)
                .order(ByteOrder.LITTLE_ENDIAN).putInt(family(address)).put(address16(address)).array();
    }

    /** A key of {@link #IFNETS}: net {@code address/prefix} of interface {@code ifindex} (0: the service ranges). */
    public static byte[] ifnetKey(int ifindex, InetAddress address, int prefix) {
        return lpmKey(ifindex, address, prefix);
    }

    /** An LPM key's fields: set ID, address, prefix length. */
    public record LpmEntry(int setId, InetAddress address, int prefix) {
    }

    public static LpmEntry decodeLpmKey(byte[] k) {
        ByteBuffer b = ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN);
        int len = b.getInt();
        int id = b.order(ByteOrder.BIG_ENDIAN).getInt();
        int family = b.order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] a = new byte[16];
        b.get(a);
        return new LpmEntry(id, inet(family, a), len - 64);
    }

    public static byte[] namedPortKey(int setId, InetAddress address, int proto, int port) {
        return le(NAMED_PORT_KEY_SIZE).putInt(setId).put(address16(address)).putShort((short) port).put((byte) proto)
                .put((byte) family(address)).array();
    }

    /** {@return the set ID of a named-port key} */
    public static int namedPortSetId(byte[] k) {
        return ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    /** {@return the family of a set member key ({@link #SETS} or {@link #NAMED_PORTS})}: {@link #FAMILY_V4} or {@link #FAMILY_V6} */
    public static int memberFamily(byte[] k) {
        return k.length == LPM_KEY_SIZE ? ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN).getInt(8)
                : Byte.toUnsignedInt(k[NAMED_PORT_KEY_SIZE - 1]);
    }

    /** A conntrack key's fields; addresses as written, ports in host order. */
    public record CtEntry(InetAddress src, InetAddress dst, int srcPort, int dstPort, int proto, Dir dir,
                          int ifindex) {
    }

    public static CtEntry decodeCtKey(byte[] k) {
        ByteBuffer b = ByteBuffer.wrap(k).order(ByteOrder.LITTLE_ENDIAN);
        byte[] s = new byte[16];
        byte[] d = new byte[16];
        b.get(s).get(d);
        int sport = Short.toUnsignedInt(b.getShort());
        int dport = Short.toUnsignedInt(b.getShort());
        int proto = Byte.toUnsignedInt(b.get());
        int dir = b.get();
        int family = b.get();
        b.get();
        return new CtEntry(inet(family, s), inet(family, d), sport, dport, proto,
                dir == 0 ? Dir.TO_ENDPOINT : Dir.FROM_ENDPOINT, b.getInt());
    }

    /** {@code cali_ct_val.state}, with its idle timeout (calico_policy.h's {@code CALI_CT_TIMEOUT_*}). */
    public enum CtState {
        TCP_SYN(1, 20), TCP_ESTABLISHED(2, 3600), TCP_FIN(3, 30), TCP_RST(4, 40), UDP(5, 60), ICMP(6, 5),
        OTHER(7, 600);

        public final int code;
        public final java.time.Duration timeout;

        CtState(int code, int timeoutSeconds) {
            this.code = code;
            this.timeout = java.time.Duration.ofSeconds(timeoutSeconds);
        }

        static CtState of(int code) {
            for (CtState s : values()) {
                if (s.code == code) {
                    return s;
                }
            }
            return OTHER; // as the program: an unknown state times out as OTHER
        }
    }

    /** {@code cali_ct_val.fins}: a FIN was seen in the key's direction. */
    public static final int CT_FIN_FWD = 1;
    /** {@code cali_ct_val.fins}: a FIN was seen in the reply's direction. */
    public static final int CT_FIN_REV = 2;
    static final int CT_KEY_SIZE = 44;
    static final int CT_VALUE_SIZE = 48;

    /**
     * A conntrack value: when the flow was last seen ({@code bpf_ktime_get_ns}, CLOCK_MONOTONIC), its
     * state, the ways a FIN was seen ({@link #CT_FIN_FWD}, {@link #CT_FIN_REV}), and the packets and
     * bytes (IP lengths) each way: the key's direction (the flow's original one) and the replies.
     */
    public record CtValue(long lastSeenNs, CtState state, int fins, long packets, long bytes, long replyPackets,
                          long replyBytes) {

        /** A value with no FIN and no counters (tests that only care for time and state). */
        public CtValue(long lastSeenNs, CtState state) {
            this(lastSeenNs, state, 0, 0, 0, 0, 0);
        }

        /** {@return this value seen at another time} */
        public CtValue withLastSeen(long ns) {
            return new CtValue(ns, state, fins, packets, bytes, replyPackets, replyBytes);
        }

        /** {@return whether the TCP flow is over}: a RST, or a FIN each way (the kernel's TIME_WAIT or later) */
        public boolean closed() {
            return state == CtState.TCP_RST || fins == (CT_FIN_FWD | CT_FIN_REV);
        }

        /** {@return whether the program treats the entry as absent at {@code nowNs}} (default timeouts) */
        public boolean expired(long nowNs) {
            return expired(nowNs, Map.of());
        }

        /** {@return whether the program treats the entry as absent at {@code nowNs}}, with {@code timeouts} configured */
        public boolean expired(long nowNs, Map<CtState, java.time.Duration> timeouts) {
            return nowNs - lastSeenNs >= timeouts.getOrDefault(state, state.timeout).toNanos();
        }
    }

    /** {@return the key of {@code state}'s entry in {@link #CT_TIMEOUTS}} */
    public static byte[] ctTimeoutKey(CtState state) {
        return le(4).putInt(state.code).array();
    }

    /** {@return a {@link #CT_TIMEOUTS} value}: whole seconds (at least 1; 0 would mean the default) */
    public static byte[] ctTimeoutValue(java.time.Duration timeout) {
        return le(4).putInt((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toSeconds()))).array();
    }

    public static CtValue decodeCtValue(byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN);
        long seen = b.getLong();
        CtState state = CtState.of(Byte.toUnsignedInt(b.get()));
        int fins = Byte.toUnsignedInt(b.get());
        b.position(16);
        long packets = b.getLong();
        long replyPackets = b.getLong();
        long bytes = b.getLong();
        return new CtValue(seen, state, fins, packets, bytes, replyPackets, b.getLong());
    }

    /** {@return a conntrack key}: the tuple as the program stores it (ports in host order), its direction and interface */
    public static byte[] ctKey(InetAddress src, InetAddress dst, int sport, int dport, int proto, Dir dir,
                               int ifindex) {
        if (family(src) != family(dst)) {
            throw new IllegalArgumentException("conntrack key of two families: " + src + ", " + dst);
        }
        return le(CT_KEY_SIZE).put(address16(src)).put(address16(dst)).putShort((short) sport).putShort((short) dport)
                .put((byte) proto).put((byte) dir.code).put((byte) family(src)).put((byte) 0).putInt(ifindex).array();
    }

    public static byte[] ctValue(long lastSeenNs, CtState state) {
        return ctValue(new CtValue(lastSeenNs, state));
    }

    public static byte[] ctValue(CtValue v) {
        return le(CT_VALUE_SIZE).putLong(v.lastSeenNs()).put((byte) v.state().code).put((byte) v.fins())
                .position(16).putLong(v.packets()).putLong(v.replyPackets()).putLong(v.bytes())
                .putLong(v.replyBytes()).array();
    }

    private static Integer flag(int flags, int bit, int value) {
        return (flags & (1 << bit)) != 0 ? value : null;
    }

    private static byte u8(Integer v) {
        return (byte) (v == null ? 0 : v);
    }

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** {@return the family of {@code a}}: {@link #FAMILY_V4} or {@link #FAMILY_V6} */
    public static int family(InetAddress a) {
        return a instanceof Inet4Address ? FAMILY_V4 : FAMILY_V6;
    }

    /** {@code a} in a key's 16-byte address field: IPv4 in the first 4 bytes, zeros after. */
    private static byte[] address16(InetAddress a) {
        return java.util.Arrays.copyOf(a.getAddress(), 16);
    }

    /** The address a key's field holds for {@code family} (an IPv6 one never read as IPv4-mapped). */
    private static InetAddress inet(int family, byte[] a16) {
        try {
            if (family == FAMILY_V4) {
                return InetAddress.getByAddress(java.util.Arrays.copyOf(a16, 4));
            }
            if (family == FAMILY_V6) {
                return Inet6Address.getByAddress(null, a16, -1);
            }
            throw new IllegalArgumentException("address family " + family);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
