// SPDX-License-Identifier: Apache-2.0
/* Calico policy for workload interfaces, as tc classifiers (one per direction) on the host-side
 * veth. An endpoint direction's rules are a table in a hash map, walked by bpf_loop (so the
 * verifier checks one rule, not the table); IP sets are LPM tries; a conntrack map lets flows
 * an endpoint direction approved (and their replies) skip the table. See calico_policy.h. */
#include "calico_common.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Nets by interface (calico_policy.h, CALI_IFNETS_SERVICES): a workload's allowed spoofed sources,
 * and under interface 0 the service ranges. Only the workload programs read it. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 65536);
	__type(key, struct cali_lpm_key);
	__type(value, __u8);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cali_ifnets SEC(".maps");

/* {return} whether addr (of w's family) is in one of the nets cali_ifnets holds for ifindex. */
static __always_inline int in_ifnets(__u32 ifindex, const struct walk *w, const __u32 *addr)
{
	struct cali_lpm_key k = { .prefixlen = 64 + 128, .set_id = bpf_htonl(ifindex), .family = w->family };
	__builtin_memcpy(k.addr, addr, 16);
	return bpf_map_lookup_elem(&cali_ifnets, &k) != NULL;
}

static __always_inline __u16 csum_fold(__s64 csum)
{
	__u32 c = (__u32)csum;
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)~c;
}

/* The refused packet turned into the frame of its answer: cut to `quote` bytes after the Ethernet
 * header (shorter packets padded with zeros), `room` bytes made for the error's own IP and ICMP
 * headers before them, the MACs swapped and the ethertype set; {return} where the error's IP
 * header goes (room + quote bytes there), or NULL: drop. */
static __always_inline void *turn_around(struct __sk_buff *skb, __u32 quote, __u32 room, __u16 ethertype)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return NULL;
	unsigned char mac_src[ETH_ALEN], mac_dst[ETH_ALEN];
	__builtin_memcpy(mac_src, eth->h_source, ETH_ALEN);
	__builtin_memcpy(mac_dst, eth->h_dest, ETH_ALEN);
	if (bpf_skb_change_tail(skb, sizeof(struct ethhdr) + quote, 0))
		return NULL;
	if (bpf_skb_adjust_room(skb, room, BPF_ADJ_ROOM_MAC, 0))
		return NULL;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) + room + quote > end)
		return NULL;
	__builtin_memcpy(eth->h_source, mac_dst, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac_src, ETH_ALEN);
	eth->h_proto = bpf_htons(ethertype);
	return eth + 1;
}

/* The error's ICMP header (type, code, checksum over `sum` and the header with what it quotes),
 * the mark that lets it past the programs, and back the way the refused packet came: out of the
 * workload's interface when the workload sent it, into the host as if the workload answered when
 * it was going to the workload. */
static __always_inline int send_back(struct __sk_buff *skb, __u32 dir, __u8 *icmp, __u32 len, __u8 type, __u8 code,
		__s64 sum)
{
	__u32 icmp_hdr[2] = { type | (code << 8), 0 }; /* type, code, checksum 0, unused */
	__builtin_memcpy(icmp, icmp_hdr, sizeof(icmp_hdr));
	__u16 check = csum_fold(bpf_csum_diff(0, 0, (__be32 *)icmp, len, sum));
	__builtin_memcpy(icmp + 2, &check, 2);
	skb->mark = CALI_MARK_REJECT;
	return bpf_redirect(skb->ifindex, dir == CALI_DIR_FROM_EP ? 0 : BPF_F_INGRESS);
}

#define REJECT_ROOM (sizeof(struct iphdr) + 8) /* the error's own IP and ICMP headers */
/* What of the refused packet the error quotes: its IP header and 32 bytes, enough to keep the
 * tail that a pending checksum offload (CHECKSUM_PARTIAL) of a TCP header needs. */
#define REJECT_QUOTE (sizeof(struct iphdr) + 32)

/* A denied packet answered, as iptables' REJECT and nftables' reject do: the packet becomes an
 * ICMP port unreachable to its source (from its destination), quoting its IP header and first 32
 * bytes, and is sent back the way it came (send_back). Not for ICMP errors, options or
 * fragments: those drop. */
static __always_inline int reject(struct __sk_buff *skb, __u32 dir)
{
	void *end = (void *)(long)skb->data_end;
	struct iphdr *ip = (void *)(long)skb->data + sizeof(struct ethhdr);
	if ((void *)(ip + 1) + 8 > end || ip->ihl != 5 || (ip->frag_off & bpf_htons(0x3fff)))
		return TC_ACT_SHOT;
	if (ip->protocol == IPPROTO_ICMP && *(__u8 *)(ip + 1) != 8)
		return TC_ACT_SHOT; /* never an error about an error (only echo requests are answered) */
	__u32 saddr = ip->saddr, daddr = ip->daddr;
	ip = turn_around(skb, REJECT_QUOTE, REJECT_ROOM, ETH_P_IP);
	if (!ip)
		return TC_ACT_SHOT;
	struct iphdr h = {
		.version = 4, .ihl = 5, .tot_len = bpf_htons(REJECT_ROOM + REJECT_QUOTE), .ttl = 64,
		.protocol = IPPROTO_ICMP, .saddr = daddr, .daddr = saddr,
	};
	h.check = csum_fold(bpf_csum_diff(0, 0, (__be32 *)&h, sizeof(h), 0));
	__builtin_memcpy(ip, &h, sizeof(h));
	return send_back(skb, dir, (__u8 *)(ip + 1), 8 + REJECT_QUOTE, 3, 3, 0); /* unreachable, port */
}

#define REJECT6_ROOM (sizeof(struct ipv6hdr) + 8)
#define REJECT6_QUOTE (sizeof(struct ipv6hdr) + 32)

/* reject() for IPv6: an ICMPv6 destination unreachable, port unreachable (type 1, code 4), quoting
 * the header and 32 bytes (extension headers included), its checksum over the pseudo-header. Only
 * when the upper layer past the extension headers (w, from parse()) is TCP, UDP or SCTP with its
 * ports (not a later fragment) or an ICMPv6 echo request; the rest drops. */
static __always_inline int reject6(struct __sk_buff *skb, __u32 dir, const struct walk *w)
{
	void *end = (void *)(long)skb->data_end;
	struct ipv6hdr *ip6 = (void *)(long)skb->data + sizeof(struct ethhdr);
	if ((void *)(ip6 + 1) + 8 > end)
		return TC_ACT_SHOT;
	int answered = w->proto == IPPROTO_ICMPV6 ? w->sport == 128
		: (w->proto == IPPROTO_TCP || w->proto == IPPROTO_UDP || w->proto == IPPROTO_SCTP) && w->has_ports;
	if (!answered)
		return TC_ACT_SHOT; /* never an error about an error */
	struct {
		__u32 src[4];
		__u32 dst[4];
		__u32 len;
		__u32 next;
	} pseudo = { .len = bpf_htonl(8 + REJECT6_QUOTE), .next = bpf_htonl(IPPROTO_ICMPV6) };
	__builtin_memcpy(pseudo.src, &ip6->daddr, 16); /* from the refused packet's destination */
	__builtin_memcpy(pseudo.dst, &ip6->saddr, 16);
	ip6 = turn_around(skb, REJECT6_QUOTE, REJECT6_ROOM, ETH_P_IPV6);
	if (!ip6)
		return TC_ACT_SHOT;
	struct ipv6hdr h = {
		.version = 6, .payload_len = bpf_htons(8 + REJECT6_QUOTE), .nexthdr = IPPROTO_ICMPV6, .hop_limit = 64,
	};
	__builtin_memcpy(&h.saddr, pseudo.src, 16);
	__builtin_memcpy(&h.daddr, pseudo.dst, 16);
	__builtin_memcpy(ip6, &h, sizeof(h));
	return send_back(skb, dir, (__u8 *)(ip6 + 1), 8 + REJECT6_QUOTE, 1, 4, /* unreachable, port */
			bpf_csum_diff(0, 0, (__be32 *)&pseudo, sizeof(pseudo), 0));
}

/* ICMPv6 of the link between a workload and its gateway, passed whatever policy and
 * defaultEndpointToHostAction say, and not tracked: from the workload, router and neighbour
 * solicitation and neighbour advertisement (as the ICMPv6 rules that start Calico's
 * cali-wl-to-host) and MLD; towards it, the same and router advertisement. Neighbour discovery
 * needs hop limit 255 (RFC 4861: never routed), MLD 1, so no forwarded packet is one of these. */
static __always_inline int link_icmpv6(const struct walk *w, __u32 dir)
{
	if (w->family != CALI_FAMILY_V6 || w->proto != IPPROTO_ICMPV6)
		return 0;
	switch (w->sport) {
	case 134: return dir == CALI_DIR_TO_EP && w->hop_limit == 255;
	case 133: case 135: case 136: return w->hop_limit == 255;
	case 130: case 131: case 132: case 143: return w->hop_limit == 1;
	default: return 0;
	}
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
	if (eth->h_proto != bpf_htons(ETH_P_IP) && eth->h_proto != bpf_htons(ETH_P_IPV6))
		return TC_ACT_SHOT; /* anything else: not policed, so not let through */
	/* The host's own traffic to its workloads is not policed (as the iptables OUTPUT chain), but
	 * tracked: the workload's replies are not new flows to the host. */
	int from_host = dir == CALI_DIR_TO_EP && skb->ingress_ifindex == 0;
	struct walk w = { .ifindex = skb->ifindex, .dir = dir };
	struct walk ct;
	__u8 tcp_flags;
	if (parse(skb, &w, &ct, &tcp_flags))
		return from_host ? TC_ACT_OK : TC_ACT_SHOT;
	if (link_icmpv6(&w, dir))
		return TC_ACT_OK; /* the workload and its gateway on their link: before the reverse path, policy, conntrack */

	__u32 zero_key = 0;
	struct cali_cfg *cfg = bpf_map_lookup_elem(&cali_cfg, &zero_key);
	__u32 cfg_flags = cfg ? cfg->flags : 0;
	if (dir == CALI_DIR_FROM_EP && (cfg_flags & CALI_CFG_RPF)) {
		/* Strict reverse path: the source must route back out of the interface it came in by, unless
		 * it is one of the workload's allowed spoofed sources (workloadSourceSpoofing Any). */
		__u32 back = 0;
		int rc = route(skb, &w, w.daddr, w.saddr, skb->ifindex, &back);
		if (((rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) || back != skb->ifindex)
				&& !in_ifnets(skb->ifindex, &w, w.saddr))
			return TC_ACT_SHOT;
	}
	if (dir == CALI_DIR_TO_EP && !from_host && (cfg_flags & CALI_CFG_SVC_LOOP)
			&& in_ifnets(CALI_IFNETS_SERVICES, &w, w.daddr)) {
		/* Forwarded and still addressed to a service range: nothing DNAT'd it (kube-proxy's DNAT
		 * comes before forwarding), so no one serves it here; as Calico's cali-cidr-block, every
		 * packet, before conntrack. */
		if (!(cfg_flags & CALI_CFG_SVC_REJECT))
			return TC_ACT_SHOT;
		return w.family == CALI_FAMILY_V6 ? reject6(skb, dir, &w) : reject(skb, dir);
	}

	__u64 now = bpf_ktime_get_ns();
	if (ct_hit(&ct, now, tcp_flags))
		return TC_ACT_OK;
	if (from_host) {
		ct_insert(&ct, now, tcp_flags);
		return TC_ACT_OK;
	}

	if (walk_table(&w, dir) < 0)
		return TC_ACT_SHOT; /* no table for this endpoint (yet): fail closed */
	emit_event(skb, &w, dir);
	if (w.verdict != CALI_ACT_ALLOW)
		return !(cfg_flags & CALI_CFG_REJECT) ? TC_ACT_SHOT
			: w.family == CALI_FAMILY_V6 ? reject6(skb, dir, &w) : reject(skb, dir);
	if (dir == CALI_DIR_FROM_EP && (cfg_flags & CALI_CFG_HOST_DROP)) {
		/* Allowed by the workload's egress policy; to the host itself (local, broadcast,
		 * multicast: not forwarded) a new flow is dropped, as iptables' cali-wl-to-host. */
		__u32 out = 0;
		if (route(skb, &w, w.saddr, w.daddr, skb->ifindex, &out) == BPF_FIB_LKUP_RET_NOT_FWDED)
			return TC_ACT_SHOT;
	}
	ct_insert(&ct, now, tcp_flags);
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
