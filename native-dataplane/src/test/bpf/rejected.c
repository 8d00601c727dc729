// SPDX-License-Identifier: Apache-2.0
/* A classifier the verifier must refuse (it reads past the packet without a bounds check), for
 * the test that a refusal is reported with the verifier's log. Names the maps the policy program
 * has, so it can stand in for it. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int calico_to_ep(struct __sk_buff *skb)
{
	unsigned char *data = (void *)(long)skb->data;
	return data[64] ? TC_ACT_OK : TC_ACT_SHOT;
}

SEC("tc")
int calico_from_ep(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}
