/* What the workload programs (calico_tc.c) and the host endpoint programs (calico_hep.c) share: the
 * pinned maps (declared alike in both objects, so the second load reuses the first's pins), the
 * rule walk (bpf_loop over an endpoint direction's table), conntrack and flow events. Each object
 * includes it once; see calico_policy.h for the layouts. */
#ifndef CALICO_COMMON_H
#define CALICO_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "calico_policy.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cali_ep_key);
	__type(value, struct cali_ep_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_eps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1048576);
	__type(key, struct cali_rule_key);
	__type(value, struct cali_rule);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_rules2 SEC(".maps"); /* 2: the rule gained its hit */

/* Flow-log prefixes by ID (user space reads them; the program only carries IDs). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, char[CALI_PREFIX_LEN]);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_prefixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_events2 SEC(".maps"); /* 2: events carry the family and 16-byte addresses */

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1048576);
	__type(key, struct cali_lpm_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_sets2 SEC(".maps"); /* 2: the key gained the family and a 16-byte address */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, struct cali_named_port_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_nports2 SEC(".maps"); /* 2: as cali_sets2 */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 524288);
	__type(key, struct cali_ct_key);
	__type(value, struct cali_ct_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_ct4 SEC(".maps"); /* 4: the key gained the family and 16-byte addresses; an older pin (cali_ct .. cali_ct3) is removed at load */

/* What the walk needs of the packet, parsed once. */
struct walk {
	__u32 ifindex;
	__u32 dir;       /* the hook: CALI_DIR_TO_EP (tc egress) or CALI_DIR_FROM_EP (tc ingress) */
	__u32 table;     /* the table walked (cali_eps' dir): a workload's is its dir, a host endpoint's one of CALI_TABLE_HEP_* */
	__u32 gen;
	__u32 len;
	__u32 next;      /* index of the next rule to evaluate */
	__u32 verdict;   /* 0 while undecided */
	__u32 saddr[4];  /* IPv4 in [0], the rest 0 */
	__u32 daddr[4];
	__u16 sport;     /* ICMP and ICMPv6: the type */
	__u16 dport;     /* ICMP and ICMPv6: the code */
	__u8 proto;      /* IPv6: the upper-layer protocol after the extension headers */
	__u8 has_ports;
	__u8 family;     /* CALI_FAMILY_* */
	__u8 hop_limit;  /* IPv6 only: neighbour discovery is 255, MLD 1 */
	__u32 ip_len;    /* the IP packet's length (conntrack's byte counters) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cali_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_cfg SEC(".maps");

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif
#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif

/* The route the kernel would take from src to dst (of w's family) arriving on ifindex: its result
 * code, and the interface out in *out_ifindex. */
static __always_inline int route(struct __sk_buff *skb, const struct walk *w, const __u32 *src, const __u32 *dst,
		__u32 ifindex, __u32 *out_ifindex)
{
	struct bpf_fib_lookup fib = {};
	if (w->family == CALI_FAMILY_V6) {
		fib.family = AF_INET6;
		__builtin_memcpy(fib.ipv6_src, src, 16);
		__builtin_memcpy(fib.ipv6_dst, dst, 16);
	} else {
		fib.family = AF_INET;
		fib.ipv4_src = src[0];
		fib.ipv4_dst = dst[0];
	}
	fib.ifindex = ifindex;
	int rc = bpf_fib_lookup(skb, &fib, sizeof(fib), 0);
	*out_ifindex = fib.ifindex;
	return rc;
}

/* The hits of the walk in progress, per CPU (a tc program runs to its end on one CPU); kept out
 * of the walk's stack, which the verifier would otherwise track through every rule's branches. */
struct hits {
	__u32 n;
	__u32 ids[CALI_EVENT_HITS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hits);
} cali_walk_hits SEC(".maps");

static __always_inline int in_set(const struct cali_set_ref *s, const struct walk *w)
{
	const __u32 *addr = s->dst ? w->daddr : w->saddr;
	if (s->kind == CALI_SET_NET) {
		struct cali_lpm_key k = { .prefixlen = 64 + 128, .set_id = bpf_htonl(s->id), .family = w->family };
		__builtin_memcpy(k.addr, addr, 16);
		return bpf_map_lookup_elem(&cali_sets2, &k) != NULL;
	}
	if (!w->has_ports)
		return 0;
	struct cali_named_port_key k = {
		.set_id = s->id, .port = s->dst ? w->dport : w->sport, .proto = w->proto, .family = w->family,
	};
	__builtin_memcpy(k.addr, addr, 16);
	return bpf_map_lookup_elem(&cali_nports2, &k) != NULL;
}

static __always_inline int rule_matches(const struct cali_rule *r, const struct walk *w)
{
	if ((r->flags & CALI_F_PROTO) && w->proto != r->proto)
		return 0;
	if ((r->flags & CALI_F_NOT_PROTO) && w->proto == r->not_proto)
		return 0;
	if (((r->flags & CALI_F_V4) && w->family != CALI_FAMILY_V4) || ((r->flags & CALI_F_V6) && w->family != CALI_FAMILY_V6))
		return 0;
	if (r->flags & (CALI_F_ICMP_TYPE | CALI_F_NOT_ICMP_TYPE)) {
		/* The packet's family's ICMP (the compiler gives a type test its family). */
		int icmp = w->proto == (w->family == CALI_FAMILY_V6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
		if ((r->flags & CALI_F_ICMP_TYPE) && (!icmp || w->sport != r->icmp_type
				|| ((r->flags & CALI_F_ICMP_CODE) && w->dport != r->icmp_code)))
			return 0;
		if ((r->flags & CALI_F_NOT_ICMP_TYPE) && icmp && w->sport == r->not_icmp_type
				&& (!(r->flags & CALI_F_NOT_ICMP_CODE) || w->dport == r->not_icmp_code))
			return 0;
	}
	__u32 want_src = 0, want_dst = 0, got_src = 0, got_dst = 0;
#pragma unroll
	for (int i = 0; i < CALI_RULE_PORTS; i++) {
		const struct cali_port_ref *p = &r->ports[i];
		if (p->kind == 0)
			continue;
		__u16 port = (p->kind == CALI_PORT_SRC || p->kind == CALI_PORT_NOT_SRC) ? w->sport : w->dport;
		int hit = w->has_ports && port >= p->lo && port <= p->hi;
		switch (p->kind) {
		case CALI_PORT_SRC: want_src = 1; got_src |= hit; break;
		case CALI_PORT_DST: want_dst = 1; got_dst |= hit; break;
		default: if (hit) return 0;
		}
	}
	if ((want_src && !got_src) || (want_dst && !got_dst))
		return 0;
#pragma unroll
	for (int i = 0; i < CALI_RULE_SETS; i++) {
		const struct cali_set_ref *s = &r->sets[i];
		if (s->kind == 0)
			continue;
		if (in_set(s, w) == s->negated)
			return 0;
	}
	return 1;
}

/* One step of the walk: the rule at w->next decides, jumps or lets the walk go on; {return} 1 when
 * the walk ends. A global function: the verifier checks it once, with nothing known of w, instead
 * of once for every state its callers reach it in (which took the programs past 1 M instructions). */
__attribute__((noinline)) int cali_walk_step(struct walk *w)
{
	if (!w || w->next >= w->len)
		return 1;
	struct cali_rule_key k = { .ifindex = w->ifindex, .dir = w->table, .gen = w->gen, .index = w->next };
	const struct cali_rule *r = bpf_map_lookup_elem(&cali_rules2, &k);
	if (!r) { /* a hole in the table: fail closed */
		w->verdict = CALI_ACT_DENY;
		return 1;
	}
	if (!rule_matches(r, w)) {
		w->next++;
		return 0;
	}
	if (r->hit) {
		__u32 zero = 0;
		struct hits *h = bpf_map_lookup_elem(&cali_walk_hits, &zero);
		if (h && h->n < CALI_EVENT_HITS) {
			h->ids[h->n & (CALI_EVENT_HITS - 1)] = r->hit;
			h->n++;
		}
	}
	if (r->action == CALI_ACT_LOG) {
		/* As Calico's eBPF dataplane: Log writes to the trace pipe (bpftool prog tracelog). */
		bpf_printk("calico-packet: ifindex %u dir %u proto %u", w->ifindex, w->dir, w->proto);
		if (w->family == CALI_FAMILY_V6)
			bpf_printk("calico-packet: [%pI6]:%u -> [%pI6]:%u", w->saddr, w->sport, w->daddr, w->dport);
		else
			bpf_printk("calico-packet: %pI4:%u -> %pI4:%u", w->saddr, w->sport, w->daddr, w->dport);
		w->next++;
		return 0;
	}
	if (r->action == CALI_ACT_JUMP) {
		w->next = r->jump > w->next ? r->jump : w->next + 1; /* only forward: the walk ends */
		return 0;
	}
	w->verdict = r->action;
	return 1;
}

static long walk_one(__u32 unused, void *ctx)
{
	return cali_walk_step(ctx) ? 1 : 0;
}

static __always_inline void ct_key(struct cali_ct_key *k, const struct walk *w, int reverse)
{
	__builtin_memcpy(k->saddr, reverse ? w->daddr : w->saddr, 16);
	__builtin_memcpy(k->daddr, reverse ? w->saddr : w->daddr, 16);
	k->sport = reverse ? w->dport : w->sport;
	k->dport = reverse ? w->sport : w->dport;
	k->proto = w->proto;
	k->dir = reverse ? !w->dir : w->dir;
	k->family = w->family;
	k->pad = 0;
	k->ifindex = w->ifindex;
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

/* Idle timeouts in seconds by state (index: CALI_CT_*), written by user space from
 * bpfConntrackTimeouts; 0 (a fresh map): the compiled default. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CALI_CT_STATES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_ct_timeouts SEC(".maps");

static __always_inline __u64 ct_timeout_ns(__u8 state)
{
	__u32 k = state;
	__u32 *configured = bpf_map_lookup_elem(&cali_ct_timeouts, &k);
	if (configured && *configured)
		return *configured * 1000000000ULL;
	__u64 s;
	switch (state) {
	case CALI_CT_TCP_SYN: s = CALI_CT_TIMEOUT_TCP_SYN; break;
	case CALI_CT_TCP_EST: s = CALI_CT_TIMEOUT_TCP_EST; break;
	case CALI_CT_TCP_FIN: s = CALI_CT_TIMEOUT_TCP_FIN; break;
	case CALI_CT_TCP_RST: s = CALI_CT_TIMEOUT_TCP_RST; break;
	case CALI_CT_UDP: s = CALI_CT_TIMEOUT_UDP; break;
	case CALI_CT_ICMP: s = CALI_CT_TIMEOUT_ICMP; break;
	default: s = CALI_CT_TIMEOUT_OTHER;
	}
	return s * 1000000000ULL;
}

/* The state a flow's first approved packet starts in. */
static __always_inline __u8 ct_first_state(__u8 proto, __u8 tcp_flags)
{
	if (proto == IPPROTO_TCP) {
		if (tcp_flags & TCP_RST)
			return CALI_CT_TCP_RST;
		if (tcp_flags & TCP_FIN)
			return CALI_CT_TCP_FIN;
		return (tcp_flags & (TCP_SYN | TCP_ACK)) == TCP_SYN ? CALI_CT_TCP_SYN : CALI_CT_TCP_EST;
	}
	return proto == IPPROTO_UDP ? CALI_CT_UDP
		: (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) ? CALI_CT_ICMP : CALI_CT_OTHER;
}

/* A live entry for the packet (its own tuple, or the reversed one for a reply): the TCP state
 * moves on (the reply makes a SYN established; a FIN or RST either way ends it) and the packet
 * skips policy. A new SYN on a tuple whose entry is past SYN goes through policy again. */
static __always_inline int ct_hit(const struct walk *w, __u64 now, __u8 tcp_flags)
{
	struct cali_ct_key k;
	for (int reverse = 0; reverse < 2; reverse++) {
		ct_key(&k, w, reverse);
		struct cali_ct_val *v = bpf_map_lookup_elem(&cali_ct4, &k);
		if (!v || now - v->last_seen_ns >= ct_timeout_ns(v->state))
			continue;
		if (w->proto == IPPROTO_TCP) {
			if (!reverse && (tcp_flags & (TCP_SYN | TCP_ACK)) == TCP_SYN && v->state != CALI_CT_TCP_SYN)
				continue;
			if (tcp_flags & TCP_RST)
				v->state = CALI_CT_TCP_RST;
			else if ((tcp_flags & TCP_FIN) && v->state != CALI_CT_TCP_RST)
				v->state = CALI_CT_TCP_FIN;
			else if (reverse && v->state == CALI_CT_TCP_SYN && (tcp_flags & TCP_ACK))
				v->state = CALI_CT_TCP_EST;
			if (tcp_flags & TCP_FIN)
				v->fins |= reverse ? CALI_CT_FIN_REV : CALI_CT_FIN_FWD;
		}
		v->last_seen_ns = now;
		/* Both legs' programs may count at once on two CPUs: atomic adds. */
		__sync_fetch_and_add(&v->packets[reverse & 1], 1);
		__sync_fetch_and_add(&v->bytes[reverse & 1], w->ip_len);
		return 1;
	}
	return 0;
}

#define CALI_V6_EXT_HDRS 4 /* IPv6 extension headers skipped before the upper layer; more: malformed */

/* The packet's IP header (IPv4, or IPv6 and up to CALI_V6_EXT_HDRS extension headers) parsed into
 * w (family, addresses, protocol, ports or ICMP type/code), its conntrack key into ct (ICMP and
 * ICMPv6 echo by its identifier, both ways) and its TCP flags; -1: malformed or another protocol
 * than IP. */
static __always_inline int parse(struct __sk_buff *skb, struct walk *w, struct walk *ct, __u8 *tcp_flags)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return -1;
	__u32 ifindex = w->ifindex, dir = w->dir;
	__builtin_memset(w, 0, sizeof(*w)); /* every byte set: the walk is handed to a global function */
	w->ifindex = ifindex;
	w->dir = dir;
	void *l4;
	int first_fragment;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->ihl < 5)
			return -1;
		w->family = CALI_FAMILY_V4;
		w->saddr[0] = ip->saddr;
		w->daddr[0] = ip->daddr;
		w->proto = ip->protocol;
		w->ip_len = bpf_ntohs(ip->tot_len);
		l4 = (void *)ip + ip->ihl * 4;
		first_fragment = (ip->frag_off & bpf_htons(0x1fff)) == 0;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return -1;
		w->family = CALI_FAMILY_V6;
		__builtin_memcpy(w->saddr, &ip6->saddr, 16);
		__builtin_memcpy(w->daddr, &ip6->daddr, 16);
		w->hop_limit = ip6->hop_limit;
		w->ip_len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		__u8 next = ip6->nexthdr;
		l4 = ip6 + 1;
		first_fragment = 1;
#pragma unroll
		for (int i = 0; i < CALI_V6_EXT_HDRS; i++) {
			__u8 *h = l4;
			if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS
					&& next != IPPROTO_FRAGMENT && next != IPPROTO_AH)
				break;
			if ((void *)(h + 8) > end)
				return -1;
			if (next == IPPROTO_FRAGMENT) {
				if (((h[2] << 8) | h[3]) & 0xfff8)
					first_fragment = 0;
				l4 = h + 8;
			} else if (next == IPPROTO_AH) {
				l4 = h + ((__u32)h[1] + 2) * 4;
			} else {
				l4 = h + ((__u32)h[1] + 1) * 8;
			}
			next = h[0];
		}
		if (next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS
				|| next == IPPROTO_FRAGMENT || next == IPPROTO_AH)
			return -1; /* more extension headers than we look through: not judged by the wrong protocol */
		w->proto = next;
	} else {
		return -1;
	}
	*tcp_flags = 0;
	if (first_fragment && (w->proto == IPPROTO_TCP || w->proto == IPPROTO_UDP || w->proto == IPPROTO_SCTP)) {
		__u16 *ports = l4;
		if ((void *)(ports + 2) > end)
			return -1;
		w->sport = bpf_ntohs(ports[0]);
		w->dport = bpf_ntohs(ports[1]);
		w->has_ports = 1;
		if (w->proto == IPPROTO_TCP) {
			__u8 *tcp = l4;
			if ((void *)(tcp + 14) > end)
				return -1;
			*tcp_flags = tcp[13];
		}
	} else if (first_fragment && (w->proto == IPPROTO_ICMP || w->proto == IPPROTO_ICMPV6)) {
		__u8 *icmp = l4;
		if ((void *)(icmp + 8) > end)
			return -1;
		w->sport = icmp[0];
		w->dport = icmp[1];
	}
	*ct = *w;
	if (ct->proto == IPPROTO_ICMP || ct->proto == IPPROTO_ICMPV6) {
		__u8 *icmp = l4;
		int echo = ct->proto == IPPROTO_ICMP ? (ct->sport == 8 || ct->sport == 0)
			: (ct->sport == 128 || ct->sport == 129);
		ct->sport = ct->dport = 0;
		if (echo && first_fragment && (void *)(icmp + 8) <= end)
			ct->sport = ct->dport = ((__u16)icmp[4] << 8) | icmp[5];
	}
	return 0;
}

/* Walks table `table` of w's interface from its start; {return} its verdict (0: it fell off the end
 * without one), or -1 when the interface has no such table. The walk's hits are reset. */
static __always_inline int walk_table(struct walk *w, __u32 table)
{
	struct cali_ep_key ek = { .ifindex = w->ifindex, .dir = table };
	struct cali_ep_val *ev = bpf_map_lookup_elem(&cali_eps, &ek);
	if (!ev)
		return -1;
	w->table = table;
	w->gen = ev->gen;
	w->len = ev->len;
	w->next = 0;
	w->verdict = 0;
	__u32 zero = 0;
	struct hits *h = bpf_map_lookup_elem(&cali_walk_hits, &zero);
	if (h)
		h->n = 0;
	bpf_loop(CALI_MAX_RULES, walk_one, w, 0);
	return w->verdict;
}

/* A flow event for the walk just done, when a rule on the way carried a hit. policy_dir: the
 * endpoint's policy direction as a workload's dir (CALI_DIR_TO_EP: its ingress policy). */
static __always_inline void emit_event(struct __sk_buff *skb, const struct walk *w, __u32 policy_dir)
{
	__u32 zero = 0;
	struct hits *h = bpf_map_lookup_elem(&cali_walk_hits, &zero);
	if (!h || !h->n)
		return;
	struct cali_event *e = bpf_ringbuf_reserve(&cali_events2, sizeof(*e), 0);
	if (!e) /* full: the event is lost (user space counts the ring's drops as NFLOG's) */
		return;
	e->ifindex = w->ifindex;
	e->dir = policy_dir;
	e->verdict = w->verdict == CALI_ACT_ALLOW ? CALI_ACT_ALLOW : CALI_ACT_DENY;
	e->proto = w->proto;
	e->nhits = h->n;
	e->family = w->family;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	__builtin_memcpy(e->saddr, w->saddr, 16);
	__builtin_memcpy(e->daddr, w->daddr, 16);
	e->sport = w->sport;
	e->dport = w->dport;
	e->len = skb->len;
#pragma unroll
	for (int i = 0; i < CALI_EVENT_HITS; i++)
		e->hits[i] = h->ids[i];
	bpf_ringbuf_submit(e, 0);
}

/* The approval of an allowed flow's first packet. */
static __always_inline void ct_insert(const struct walk *ct, __u64 now, __u8 tcp_flags)
{
	struct cali_ct_key k;
	ct_key(&k, ct, 0);
	struct cali_ct_val v = {
		.last_seen_ns = now, .state = ct_first_state(ct->proto, tcp_flags),
		.fins = (ct->proto == IPPROTO_TCP && (tcp_flags & TCP_FIN)) ? CALI_CT_FIN_FWD : 0,
		.packets = { 1, 0 }, .bytes = { ct->ip_len, 0 },
	};
	bpf_map_update_elem(&cali_ct4, &k, &v, BPF_ANY);
}

#endif
