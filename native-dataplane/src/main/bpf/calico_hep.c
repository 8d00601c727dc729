// SPDX-License-Identifier: Apache-2.0
/* Calico policy for host endpoints: tc classifiers on a host interface, in an object of their own
 * (so the verifier checks them apart from the workload programs; the maps are the same pins, see
 * calico_common.h). A packet walks up to three of the interface's tables, in Calico's order:
 * doNotTrack (before conntrack: an allow skips conntrack and everything after, unrecorded), then
 * conntrack, then preDNAT (arriving only), then the normal table: the host's own traffic (with the
 * failsafe ports first) or forwarded traffic (applyOnForward policy). An untracked or preDNAT
 * table without a verdict hands over to the next stage; a missing normal table drops. */
#include "calico_common.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ICMPv6 of the host's link, passed whatever policy says (IPv6's ARP: without it a host endpoint's
 * default deny would cut the host's IPv6 off, failsafe ports included), untracked: router and
 * neighbour solicitation and advertisement and redirect with hop limit 255, MLD with hop limit 1,
 * either way. The hop limits (RFC 4861: 255, never routed; MLD: 1) keep any forwarded packet out.
 * As the workload programs' link_icmpv6, but a host may also send router advertisements and get
 * redirects from its router. */
static __always_inline int host_link_icmpv6(const struct walk *w)
{
	if (w->family != CALI_FAMILY_V6 || w->proto != IPPROTO_ICMPV6)
		return 0;
	switch (w->sport) {
	case 133: case 134: case 135: case 136: case 137: return w->hop_limit == 255;
	case 130: case 131: case 132: case 143: return w->hop_limit == 1;
	default: return 0;
	}
}

/* dir: the hook (CALI_DIR_FROM_EP: tc ingress, arriving; CALI_DIR_TO_EP: tc egress, leaving). */
static __always_inline int police_host(struct __sk_buff *skb, __u32 dir)
{
	if (skb->mark == CALI_MARK_REJECT)
		return TC_ACT_OK; /* a workload program's answer on its way */
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end)
		return TC_ACT_SHOT;
	if (eth->h_proto != bpf_htons(ETH_P_IP) && eth->h_proto != bpf_htons(ETH_P_IPV6))
		return TC_ACT_OK; /* ARP and the link's other protocols: not IP policy's */
	struct walk w = { .ifindex = skb->ifindex, .dir = dir };
	struct walk ct;
	__u8 tcp_flags;
	if (parse(skb, &w, &ct, &tcp_flags))
		return TC_ACT_SHOT;
	if (host_link_icmpv6(&w))
		return TC_ACT_OK; /* the host and its neighbours on the link: before every stage, untracked */
	int in = dir == CALI_DIR_FROM_EP;

	int v = walk_table(&w, in ? CALI_TABLE_HEP_UNTRACKED_IN : CALI_TABLE_HEP_UNTRACKED_OUT);
	if (v == CALI_ACT_ALLOW)
		return TC_ACT_OK;
	if (v == CALI_ACT_DENY)
		return TC_ACT_SHOT;

	__u64 now = bpf_ktime_get_ns();
	if (ct_hit(&ct, now, tcp_flags))
		return TC_ACT_OK;

	if (in) {
		v = walk_table(&w, CALI_TABLE_HEP_PRE_DNAT_IN);
		if (v == CALI_ACT_DENY)
			return TC_ACT_SHOT;
		if (v == CALI_ACT_ALLOW) {
			ct_insert(&ct, now, tcp_flags);
			return TC_ACT_OK;
		}
	}

	/* The host's own or forwarded: arriving, by the route to the destination (local: not
	 * forwarded); leaving, by where it came from (nowhere: the host sent it). */
	__u32 table;
	if (in) {
		/* Forwarding off on the interface (the family's sysctl): nothing it brings is forwarded. */
		__u32 out = 0;
		int rc = route(skb, &w, w.saddr, w.daddr, skb->ifindex, &out);
		table = rc == BPF_FIB_LKUP_RET_NOT_FWDED || rc == BPF_FIB_LKUP_RET_FWD_DISABLED
			? CALI_TABLE_HEP_IN : CALI_TABLE_HEP_FWD_IN;
	} else {
		table = skb->ingress_ifindex == 0 ? CALI_TABLE_HEP_OUT : CALI_TABLE_HEP_FWD_OUT;
	}
	if (walk_table(&w, table) < 0)
		return TC_ACT_SHOT; /* attached without its table: fail closed */
	emit_event(skb, &w, in ? CALI_DIR_TO_EP : CALI_DIR_FROM_EP); /* arriving: its ingress policy */
	if (w.verdict != CALI_ACT_ALLOW)
		return TC_ACT_SHOT;
	ct_insert(&ct, now, tcp_flags);
	return TC_ACT_OK;
}

SEC("tc")
int calico_hep_in(struct __sk_buff *skb)
{
	return police_host(skb, CALI_DIR_FROM_EP);
}

SEC("tc")
int calico_hep_out(struct __sk_buff *skb)
{
	return police_host(skb, CALI_DIR_TO_EP);
}
