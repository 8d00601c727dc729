// SPDX-License-Identifier: Apache-2.0
/* Calico policy for workload interfaces, as tc classifiers (one per direction) on the host-side
 * veth. An endpoint direction's rules are a table in a hash map, walked by bpf_loop (so the
 * verifier checks one rule, not the table); IP sets are LPM tries; a conntrack map lets flows
 * an endpoint direction approved (and their replies) skip the table. See calico_policy.h. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "calico_policy.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
} cali_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1048576);
	__type(key, struct cali_lpm_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__type(key, struct cali_named_port_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_nports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 524288);
	__type(key, struct cali_ct_key);
	__type(value, struct cali_ct_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_ct2 SEC(".maps"); /* 2: the value gained the state; the old pin (cali_ct) is removed by felix */

/* What the walk needs of the packet, parsed once. */
struct walk {
	__u32 ifindex;
	__u32 dir;
	__u32 gen;
	__u32 len;
	__u32 next;      /* index of the next rule to evaluate */
	__u32 verdict;   /* 0 while undecided */
	__u32 saddr;
	__u32 daddr;
	__u16 sport;     /* ICMP: the type */
	__u16 dport;     /* ICMP: the code */
	__u8 proto;
	__u8 has_ports;
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

/* The route the kernel would take from src to dst arriving on ifindex: its result code, and the
 * interface out in *out_ifindex. */
static __always_inline int route(struct __sk_buff *skb, __u32 src, __u32 dst, __u32 ifindex, __u32 *out_ifindex)
{
	struct bpf_fib_lookup fib = {};
	fib.family = AF_INET;
	fib.ipv4_src = src;
	fib.ipv4_dst = dst;
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
	__u32 addr = s->dst ? w->daddr : w->saddr;
	if (s->kind == CALI_SET_NET) {
		struct cali_lpm_key k = { .prefixlen = 64, .set_id = bpf_htonl(s->id), .addr = addr };
		return bpf_map_lookup_elem(&cali_sets, &k) != NULL;
	}
	if (!w->has_ports)
		return 0;
	struct cali_named_port_key k = {
		.set_id = s->id, .addr = addr, .port = s->dst ? w->dport : w->sport, .proto = w->proto,
	};
	return bpf_map_lookup_elem(&cali_nports, &k) != NULL;
}

static __always_inline int rule_matches(const struct cali_rule *r, const struct walk *w)
{
	if ((r->flags & CALI_F_PROTO) && w->proto != r->proto)
		return 0;
	if ((r->flags & CALI_F_NOT_PROTO) && w->proto == r->not_proto)
		return 0;
	if (r->flags & (CALI_F_ICMP_TYPE | CALI_F_NOT_ICMP_TYPE)) {
		int icmp = w->proto == IPPROTO_ICMP;
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

static long walk_one(__u32 unused, void *ctx)
{
	struct walk *w = ctx;
	if (w->next >= w->len)
		return 1;
	struct cali_rule_key k = { .ifindex = w->ifindex, .dir = w->dir, .gen = w->gen, .index = w->next };
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
		bpf_printk("calico-packet: %pI4:%u -> %pI4:%u", &w->saddr, w->sport, &w->daddr, w->dport);
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

static __always_inline void ct_key(struct cali_ct_key *k, const struct walk *w, int reverse)
{
	k->saddr = reverse ? w->daddr : w->saddr;
	k->daddr = reverse ? w->saddr : w->daddr;
	k->sport = reverse ? w->dport : w->sport;
	k->dport = reverse ? w->sport : w->dport;
	k->proto = w->proto;
	k->dir = reverse ? !w->dir : w->dir;
	k->pad = 0;
	k->ifindex = w->ifindex;
}

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

static __always_inline __u64 ct_timeout_ns(__u8 state)
{
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
	return proto == IPPROTO_UDP ? CALI_CT_UDP : proto == IPPROTO_ICMP ? CALI_CT_ICMP : CALI_CT_OTHER;
}

/* A live entry for the packet (its own tuple, or the reversed one for a reply): the TCP state
 * moves on (the reply makes a SYN established; a FIN or RST either way ends it) and the packet
 * skips policy. A new SYN on a tuple whose entry is past SYN goes through policy again. */
static __always_inline int ct_hit(const struct walk *w, __u64 now, __u8 tcp_flags)
{
	struct cali_ct_key k;
	for (int reverse = 0; reverse < 2; reverse++) {
		ct_key(&k, w, reverse);
		struct cali_ct_val *v = bpf_map_lookup_elem(&cali_ct2, &k);
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
		}
		v->last_seen_ns = now;
		return 1;
	}
	return 0;
}

static __always_inline __u16 csum_fold(__s64 csum)
{
	__u32 c = (__u32)csum;
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)~c;
}

#define REJECT_ROOM (sizeof(struct iphdr) + 8) /* the error's own IP and ICMP headers */
/* What of the refused packet the error quotes: its IP header and 32 bytes, enough to keep the
 * tail that a pending checksum offload (CHECKSUM_PARTIAL) of a TCP header needs. */
#define REJECT_QUOTE (sizeof(struct iphdr) + 32)

/* A denied packet answered, as iptables' REJECT and nftables' reject do: the packet becomes an
 * ICMP port unreachable to its source (from its destination), quoting its IP header and first 32
 * bytes (shorter packets padded with zeros), and is sent back the way it came: out of the workload's interface when the workload sent
 * it, into the host as if the workload answered when it was going to the workload. Marked, so the
 * programs on the way back let it pass. Not for ICMP errors, options or fragments: those drop. */
static __always_inline int reject(struct __sk_buff *skb, __u32 dir)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) + 8 > end || ip->ihl != 5 || (ip->frag_off & bpf_htons(0x3fff)))
		return TC_ACT_SHOT;
	if (ip->protocol == IPPROTO_ICMP && *(__u8 *)(ip + 1) != 8)
		return TC_ACT_SHOT; /* never an error about an error (only echo requests are answered) */
	unsigned char mac_src[ETH_ALEN], mac_dst[ETH_ALEN];
	__builtin_memcpy(mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(mac_dst, eth->h_dest, ETH_ALEN);
	__u32 saddr = ip->saddr, daddr = ip->daddr;
	if (bpf_skb_change_tail(skb, sizeof(struct ethhdr) + REJECT_QUOTE, 0))
		return TC_ACT_SHOT;
	if (bpf_skb_adjust_room(skb, REJECT_ROOM, BPF_ADJ_ROOM_MAC, 0))
		return TC_ACT_SHOT;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	eth = data;
	ip = (void *)(eth + 1);
	__u8 *icmp = (void *)(ip + 1);
	if ((void *)icmp + 8 + REJECT_QUOTE > end)
		return TC_ACT_SHOT;
	__builtin_memcpy(eth->h_source, mac_dst, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac_src, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IP);
	struct iphdr h = {
		.version = 4, .ihl = 5, .tot_len = bpf_htons(REJECT_ROOM + REJECT_QUOTE), .ttl = 64,
		.protocol = IPPROTO_ICMP, .saddr = daddr, .daddr = saddr,
	};
	h.check = csum_fold(bpf_csum_diff(0, 0, (__be32 *)&h, sizeof(h), 0));
	__builtin_memcpy(ip, &h, sizeof(h));
	__u32 icmp_hdr[2] = { 3 | (3 << 8), 0 }; /* type 3 (unreachable), code 3 (port), checksum 0, unused */
	__builtin_memcpy(icmp, icmp_hdr, sizeof(icmp_hdr));
	__s64 sum = bpf_csum_diff(0, 0, (__be32 *)icmp, 8 + REJECT_QUOTE, 0);
	__u16 check = csum_fold(sum);
	__builtin_memcpy(icmp + 2, &check, 2);
	skb->mark = CALI_MARK_REJECT;
	return bpf_redirect(skb->ifindex, dir == CALI_DIR_FROM_EP ? 0 : BPF_F_INGRESS);
}

static __always_inline int police(struct __sk_buff *skb, __u32 dir)
{
	if (skb->mark == CALI_MARK_REJECT)
		return TC_ACT_OK; /* our own answer to a packet policy refused */
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return TC_ACT_SHOT;
	if (eth->h_proto == bpf_htons(ETH_P_ARP))
		return TC_ACT_OK;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_SHOT; /* IPv6 and the rest: not policed yet, so not let through */
	/* The host's own traffic to its workloads is not policed (as the iptables OUTPUT chain). */
	if (dir == CALI_DIR_TO_EP && skb->ingress_ifindex == 0)
		return TC_ACT_OK;
	struct iphdr *ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl < 5)
		return TC_ACT_SHOT;

	__u32 zero_key = 0;
	struct cali_cfg *cfg = bpf_map_lookup_elem(&cali_cfg, &zero_key);
	__u32 cfg_flags = cfg ? cfg->flags : 0;
	if (dir == CALI_DIR_FROM_EP && (cfg_flags & CALI_CFG_RPF)) {
		/* Strict reverse path: the source must route back out of the interface it came in by. */
		__u32 back = 0;
		int rc = route(skb, ip->daddr, ip->saddr, skb->ifindex, &back);
		if ((rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) || back != skb->ifindex)
			return TC_ACT_SHOT;
	}

	struct walk w = {
		.ifindex = skb->ifindex, .dir = dir, .saddr = ip->saddr, .daddr = ip->daddr, .proto = ip->protocol,
	};
	void *l4 = (void *)ip + ip->ihl * 4;
	int first_fragment = (ip->frag_off & bpf_htons(0x1fff)) == 0;
	__u8 tcp_flags = 0;
	if (first_fragment && (ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP
			|| ip->protocol == IPPROTO_SCTP)) {
		__u16 *ports = l4;
		if ((void *)(ports + 2) > end)
			return TC_ACT_SHOT;
		w.sport = bpf_ntohs(ports[0]);
		w.dport = bpf_ntohs(ports[1]);
		w.has_ports = 1;
		if (ip->protocol == IPPROTO_TCP) {
			__u8 *tcp = l4;
			if ((void *)(tcp + 14) > end)
				return TC_ACT_SHOT;
			tcp_flags = tcp[13];
		}
	} else if (first_fragment && ip->protocol == IPPROTO_ICMP) {
		__u8 *icmp = l4;
		if ((void *)(icmp + 8) > end)
			return TC_ACT_SHOT;
		w.sport = icmp[0];
		w.dport = icmp[1];
	}

	/* Conntrack keys: ICMP echo by its identifier, both ways. */
	struct walk ct = w;
	if (ct.proto == IPPROTO_ICMP) {
		__u8 *icmp = l4;
		int echo = ct.sport == 8 || ct.sport == 0;
		ct.sport = ct.dport = 0;
		if (echo && first_fragment && (void *)(icmp + 8) <= end)
			ct.sport = ct.dport = ((__u16)icmp[4] << 8) | icmp[5];
	}
	__u64 now = bpf_ktime_get_ns();
	if (ct_hit(&ct, now, tcp_flags))
		return TC_ACT_OK;

	struct cali_ep_key ek = { .ifindex = skb->ifindex, .dir = dir };
	struct cali_ep_val *ev = bpf_map_lookup_elem(&cali_eps, &ek);
	if (!ev)
		return TC_ACT_SHOT; /* no table for this endpoint (yet): fail closed */
	w.gen = ev->gen;
	w.len = ev->len;
	__u32 zero = 0;
	struct hits *h = bpf_map_lookup_elem(&cali_walk_hits, &zero);
	if (h)
		h->n = 0;
	bpf_loop(CALI_MAX_RULES, walk_one, &w, 0);
	if (h && h->n) {
		struct cali_event *e = bpf_ringbuf_reserve(&cali_events, sizeof(*e), 0);
		if (e) { /* full: the event is lost (user space counts the ring's drops as NFLOG's) */
			e->ifindex = w.ifindex;
			e->dir = dir;
			e->verdict = w.verdict == CALI_ACT_ALLOW ? CALI_ACT_ALLOW : CALI_ACT_DENY;
			e->proto = w.proto;
			e->nhits = h->n;
			e->saddr = w.saddr;
			e->daddr = w.daddr;
			e->sport = w.sport;
			e->dport = w.dport;
			e->len = skb->len;
#pragma unroll
			for (int i = 0; i < CALI_EVENT_HITS; i++)
				e->hits[i] = h->ids[i];
			bpf_ringbuf_submit(e, 0);
		}
	}
	if (w.verdict != CALI_ACT_ALLOW)
		return (cfg_flags & CALI_CFG_REJECT) ? reject(skb, dir) : TC_ACT_SHOT;
	if (dir == CALI_DIR_FROM_EP && (cfg_flags & CALI_CFG_HOST_DROP)) {
		/* Allowed by the workload's egress policy; to the host itself (local, broadcast,
		 * multicast: not forwarded) a new flow is dropped, as iptables' cali-wl-to-host. */
		__u32 out = 0;
		if (route(skb, ip->saddr, ip->daddr, skb->ifindex, &out) == BPF_FIB_LKUP_RET_NOT_FWDED)
			return TC_ACT_SHOT;
	}

	struct cali_ct_key k;
	ct_key(&k, &ct, 0);
	struct cali_ct_val v = { .last_seen_ns = now, .state = ct_first_state(ct.proto, tcp_flags) };
	bpf_map_update_elem(&cali_ct2, &k, &v, BPF_ANY);
	return TC_ACT_OK;
}

SEC("tc")
int calico_to_ep(struct __sk_buff *skb)
{
	return police(skb, CALI_DIR_TO_EP);
}

SEC("tc")
int calico_from_ep(struct __sk_buff *skb)
{
	return police(skb, CALI_DIR_FROM_EP);
}
