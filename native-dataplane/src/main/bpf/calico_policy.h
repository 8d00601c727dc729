/* The maps shared by calico_tc.c and user space (calico.dataplane.bpf.PolicyMaps owns the Java
 * side of every layout here: change both together). Both families share every map: a key carries
 * the family (CALI_FAMILY_V4 or _V6) beside a 16-byte address field, an IPv4 address in its first
 * 4 bytes and zeros after. */
#ifndef CALICO_POLICY_H
#define CALICO_POLICY_H

#include <linux/types.h>

#define CALI_DIR_TO_EP   0 /* towards the workload (its ingress policy): tc egress of the host-side veth */
#define CALI_DIR_FROM_EP 1 /* from the workload (its egress policy): tc ingress of the host-side veth */

/* The tables of a host endpoint's interface (cali_eps' dir beside the workload's two): which one a
 * packet walks depends on the hook, on whether it is the host's own or forwarded, and on the stage. */
#define CALI_TABLE_HEP_IN           2 /* arriving for the host itself: inbound failsafes, ingress policy, profiles */
#define CALI_TABLE_HEP_OUT          3 /* the host's own, leaving: outbound failsafes, egress policy, profiles */
#define CALI_TABLE_HEP_FWD_IN       4 /* arriving to be forwarded: applyOnForward ingress policy */
#define CALI_TABLE_HEP_FWD_OUT      5 /* forwarded, leaving: applyOnForward egress policy */
#define CALI_TABLE_HEP_UNTRACKED_IN 6 /* doNotTrack ingress, before conntrack (no verdict: on to the next stage) */
#define CALI_TABLE_HEP_UNTRACKED_OUT 7 /* doNotTrack egress, before conntrack */
#define CALI_TABLE_HEP_PRE_DNAT_IN  8 /* preDNAT ingress, after conntrack, before the normal tables */

#define CALI_MAX_RULES 4096 /* longest rule table one endpoint direction may have */
#define CALI_RULE_SETS 8
#define CALI_RULE_PORTS 16

/* Rule actions. */
#define CALI_ACT_ALLOW 1
#define CALI_ACT_DENY  2
#define CALI_ACT_JUMP  3 /* Pass, or the end of a profile: continue at rule.jump */
#define CALI_ACT_LOG   4 /* a Log rule: the packet goes to the trace pipe, the walk goes on */

/* rule.flags */
#define CALI_F_PROTO        (1 << 0) /* packet protocol == proto */
#define CALI_F_NOT_PROTO    (1 << 1) /* packet protocol != not_proto */
#define CALI_F_ICMP_TYPE    (1 << 2)
#define CALI_F_ICMP_CODE    (1 << 3)
#define CALI_F_NOT_ICMP_TYPE (1 << 4)
#define CALI_F_NOT_ICMP_CODE (1 << 5)
#define CALI_F_V4           (1 << 6) /* IPv4 packets only (a rule with ipVersion 4, or IPv4 nets or ICMP) */
#define CALI_F_V6           (1 << 7) /* IPv6 packets only */

/* Address families in keys and events (not AF_*: a byte that says which bytes of an address count). */
#define CALI_FAMILY_V4 4
#define CALI_FAMILY_V6 6

/* set_ref.kind */
#define CALI_SET_NET        1 /* address in the LPM set */
#define CALI_SET_NAMED_PORT 2 /* (address, protocol, port) in the named-port set */

/* port_ref.kind: positive kinds are ORed within a kind, negated ones must all miss */
#define CALI_PORT_SRC     1
#define CALI_PORT_DST     2
#define CALI_PORT_NOT_SRC 3
#define CALI_PORT_NOT_DST 4

struct cali_ep_key {
	__u32 ifindex;
	__u32 dir;
};

/* An endpoint direction's current rule table: entries (ifindex, dir, gen, 0..len-1). */
struct cali_ep_val {
	__u32 gen;
	__u32 len;
};

struct cali_rule_key {
	__u32 ifindex;
	__u16 dir;
	__u16 gen;
	__u32 index;
};

struct cali_set_ref {
	__u32 id;
	__u8 kind;
	__u8 dst; /* 0: source side, 1: destination side */
	__u8 negated;
	__u8 pad;
};

struct cali_port_ref {
	__u16 lo;
	__u16 hi;
	__u8 kind;
	__u8 pad[3];
};

struct cali_rule {
	__u8 action;
	__u8 proto;
	__u8 not_proto;
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 not_icmp_type;
	__u8 not_icmp_code;
	__u8 pad;
	__u32 flags;
	__u32 jump;
	struct cali_set_ref sets[CALI_RULE_SETS];
	struct cali_port_ref ports[CALI_RULE_PORTS];
	__u32 hit; /* flow logs: the ID of this rule's NFLOG-style prefix in cali_prefixes; 0: none */
	__u32 pad2;
};

/* cali_cfg (one entry, written by user space; all zero: neither check). */
#define CALI_CFG_RPF 1 /* drop a workload's packet whose source does not route back out of its interface */
#define CALI_CFG_HOST_DROP 2 /* drop a workload's new flows to the host itself (defaultEndpointToHostAction Drop) */
#define CALI_CFG_REJECT 4 /* a policy deny answers ICMP port unreachable (iptablesFilterDenyAction Reject) */
#define CALI_CFG_SVC_LOOP 8 /* forwarded traffic to a workload still addressed to a service range (cali_ifnets, interface 0) stops (serviceLoopPrevention) */
#define CALI_CFG_SVC_REJECT 16 /* ... and is answered with an ICMP port unreachable instead of dropped (serviceLoopPrevention Reject) */

/* skb->mark of the ICMP errors the programs build: they skip policy on their way back. */
#define CALI_MARK_REJECT 0xca110001

struct cali_cfg {
	__u32 flags;
};

#define CALI_EVENT_HITS 8
#define CALI_PREFIX_LEN 64

/* A flow event on cali_events2: the first packet of a flow walked an endpoint direction's table
 * (only when a rule on the way carried a hit). hits: the prefixes logged on the way, in order
 * (Passes, then the verdict). */
struct cali_event {
	__u32 ifindex;
	__u8 dir;
	__u8 verdict; /* CALI_ACT_ALLOW or CALI_ACT_DENY */
	__u8 proto;
	__u8 nhits;
	__u8 family;
	__u8 pad[3];
	__u32 saddr[4];
	__u32 daddr[4];
	__u16 sport;
	__u16 dport;
	__u32 len;
	__u32 hits[CALI_EVENT_HITS];
};

/* LPM key of an IP set member: the set ID and the family are the first 64 bits of the prefix, so
 * one trie holds both families of a set and an IPv6 ::/0 never matches an IPv4 packet. */
struct cali_lpm_key {
	__u32 prefixlen; /* 64 + the CIDR's length */
	__u32 set_id;    /* network byte order, so it prefixes the address */
	__u32 family;    /* CALI_FAMILY_* (host order: only ever compared whole) */
	__u32 addr[4];   /* network byte order; IPv4 in addr[0] */
};

/* cali_ifnets' key is a cali_lpm_key whose set_id is an interface's ifindex (network order): the
 * source prefixes that workload may send from whatever the reverse path says (its
 * allowSpoofedSourcePrefixes under workloadSourceSpoofing Any); ifindex 0: the service ranges
 * serviceLoopPrevention guards. */
#define CALI_IFNETS_SERVICES 0

struct cali_named_port_key {
	__u32 set_id;
	__u32 addr[4]; /* network byte order; IPv4 in addr[0], the rest 0 */
	__u16 port;
	__u8 proto;
	__u8 family;
};

/* A flow one endpoint direction approved; replies match the reversed tuple. */
struct cali_ct_key {
	__u32 saddr[4]; /* IPv4 in [0], the rest 0 */
	__u32 daddr[4];
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 dir;
	__u8 family;
	__u8 pad;
	__u32 ifindex;
};

/* cali_ct_val.state: what the flow has shown so far; each state has its own idle timeout. */
#define CALI_CT_TCP_SYN 1 /* a SYN approved, no reply yet */
#define CALI_CT_TCP_EST 2 /* the reply seen (or a flow picked up mid-way) */
#define CALI_CT_TCP_FIN 3 /* a FIN seen, either way */
#define CALI_CT_TCP_RST 4 /* a RST seen, either way */
#define CALI_CT_UDP     5
#define CALI_CT_ICMP    6
#define CALI_CT_OTHER   7
#define CALI_CT_STATES  8 /* entries of cali_ct_timeouts (index 0 unused) */

/* Idle timeouts in seconds, per state (Calico's bpfConntrackTimeouts defaults), unless
 * cali_ct_timeouts holds another; an entry idle longer is as absent, and user space's cleaner
 * deletes it. */
#define CALI_CT_TIMEOUT_TCP_SYN 20
#define CALI_CT_TIMEOUT_TCP_EST 3600
#define CALI_CT_TIMEOUT_TCP_FIN 30
#define CALI_CT_TIMEOUT_TCP_RST 40
#define CALI_CT_TIMEOUT_UDP     60
#define CALI_CT_TIMEOUT_ICMP    5
#define CALI_CT_TIMEOUT_OTHER   600

/* cali_ct_val.fins: which ways a FIN was seen (the flow is over once both were, or on a RST). */
#define CALI_CT_FIN_FWD 1 /* in the key's direction */
#define CALI_CT_FIN_REV 2 /* in the reply's */

/* Counters by way: [0] the key's direction (the flow's original one), [1] the replies. Bytes are
 * IP lengths, as the kernel's conntrack accounting counts them. */
struct cali_ct_val {
	__u64 last_seen_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u8 state;
	__u8 fins;
	__u8 pad[6];
	__u64 packets[2];
	__u64 bytes[2];
};

#endif
