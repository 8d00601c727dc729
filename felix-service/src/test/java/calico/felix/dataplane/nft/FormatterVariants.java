package calico.felix.dataplane.nft;

import calico.felix.dataplane.rules.GenericRule;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Match;
import calico.felix.dataplane.rules.Match.Dir;
import calico.felix.dataplane.rules.Target;
import java.util.List;
import java.util.Set;

/**
 * Every match and target variant {@link NftRuleFormatter} makes for a filter chain, in rules the
 * kernel accepts: the formatter's kernel test and the nft-syntax test apply the same list. The
 * rules name sets {@code s:a} (both families, CIDRs) and {@code n:p} (IPv4 named ports) and jump
 * to the chains in {@link #TARGETS}, which the tests create.
 */
final class FormatterVariants {

    static final List<String> TARGETS = List.of("cali-b", "cali-pi-default/ns1/np.1");

    private FormatterVariants() {
    }

    static List<GenericRule> rules() {
        return List.of(
                GenericRule.of(Target.ACCEPT, new Match.Family(IpFamily.V4), new Match.Interface(true, "cali", true),
                        new Match.Protocol("tcp", false), new Match.Ports(Dir.DST, List.of("80", "1000:2000"), true),
                        new Match.Ports(Dir.SRC, List.of("53"), false)),
                GenericRule.of(Target.DROP, new Match.Family(IpFamily.V6), new Match.Interface(false, "eth0", false),
                        new Match.Protocol("udp", true), new Match.Conntrack(Set.of(Match.CtState.INVALID))),
                GenericRule.of(Target.ACCEPT, new Match.Conntrack(Set.of(Match.CtState.ESTABLISHED, Match.CtState.RELATED))),
                GenericRule.of(Target.ACCEPT, new Match.Protocol("132", false), new Match.Ports(Dir.DST, List.of("3000:3100"), false)),
                GenericRule.of(Target.RETURN, new Match.Icmp(IpFamily.V4, 3, 1, true)),
                GenericRule.of(Target.RETURN, new Match.Icmp(IpFamily.V4, 8, null, false)),
                GenericRule.of(Target.ACCEPT, new Match.Icmp(IpFamily.V6, 128, 0, false)),
                // as RuleRenderer writes the ICMPv6 a workload may always send to the host
                GenericRule.of(Target.ACCEPT, new Match.Protocol("ipv6-icmp", false), new Match.Icmp(IpFamily.V6, 130, null, false)),
                GenericRule.of(Target.ACCEPT, new Match.Protocol("icmp", false), new Match.Icmp(IpFamily.V4, 8, null, false)),
                GenericRule.of(new Target.Jump("cali-b"), new Match.Nets(Dir.SRC, List.of("10.0.0.0/8", "192.168.0.1"), false),
                        new Match.Nets(Dir.DST, List.of("172.16.0.0/12"), true)),
                GenericRule.of(new Target.Goto("cali-b"), new Match.Nets(Dir.DST, List.of("fd00::/16", "2001:db8::1"), false)),
                GenericRule.of(new Target.SetMark(0x10000), new Match.InSet(Dir.SRC, IpFamily.V4, "s:a", false),
                        new Match.InSet(Dir.DST, IpFamily.V4, "s:a", true)),
                GenericRule.of(Target.ACCEPT, new Match.InSet(Dir.DST, IpFamily.V6, "s:a", true)),
                GenericRule.of(new Target.ClearMark(0x30000), new Match.Protocol("tcp", false),
                        new Match.NamedPortSet(Dir.DST, IpFamily.V4, "n:p", false)),
                GenericRule.of(Target.DROP, new Match.NamedPortSet(Dir.SRC, IpFamily.V4, "n:p", true)),
                GenericRule.of(new Target.Log("calico-packet: "), new Match.MarkAllSet(0x10000), new Match.MarkAllClear(0x20000)),
                GenericRule.of(new Target.Nflog(1, "API0|np/prod/web"), new Match.MarkAllSet(0x10000)),
                GenericRule.of(new Target.Reject(), new Match.ConntrackDnat(false)),
                GenericRule.of(Target.RETURN, new Match.ConntrackDnat(true)),
                GenericRule.of(Target.ACCEPT, new Match.DstLocal(false), new Match.Interface(false, "eth0", false)),
                GenericRule.of(Target.RETURN, new Match.DstLocal(true)),
                GenericRule.of(Target.DROP, new Match.ReversePathFails()),
                GenericRule.of(new Target.Jump("cali-pi-default/ns1/np.1"), new Match.MarkAllClear(0x20000))
                        .withComment("start of tier default"),
                GenericRule.of(Target.DROP).withComment("y".repeat(300)));
    }
}
