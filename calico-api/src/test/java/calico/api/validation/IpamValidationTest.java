package calico.api.validation;

import static calico.api.validation.ValidationCases.invalid;
import static calico.api.validation.ValidationCases.valid;
import static calico.api.validation.Yaml.resource;
import static org.assertj.core.api.Assertions.assertThat;

import calico.api.model.IpamNames;
import calico.api.net.Cidr;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table of IPAMBlock, BlockAffinity, IPAMHandle and IPAMConfiguration cases, and Calico's names. */
class IpamValidationTest {

    private static String block(String name, String spec) {
        return resource("IPAMBlock", "{name: " + name + "}", spec);
    }

    private static String affinity(String name, String spec) {
        return resource("BlockAffinity", "{name: " + name + "}", spec);
    }

    private static String handle(String name, String spec) {
        return resource("IPAMHandle", "{name: \"" + name + "\"}", spec);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                row("block", valid(block("10-0-0-0-30",
                        "{cidr: 10.0.0.0/30, affinity: \"host:n1\", allocations: [0, null, null, 0], unallocated: [1, 2],"
                                + " attributes: [{handle_id: h}], sequenceNumber: 3, sequenceNumberForAllocation: {\"0\": 1, \"3\": 2}}"))),
                row("IPv6 block", valid(block("fd00---126",
                        "{cidr: \"fd00::/126\", allocations: [null, null, null, null], unallocated: [0, 1, 2, 3]}"))),
                row("block without spec", invalid(block("b", null), "spec | is required")),
                row("block name", invalid(block("b",
                        "{cidr: 10.0.0.4/30, allocations: [null, null, null, null], unallocated: [0, 1, 2, 3]}"),
                        "metadata.name | the block name of spec.cidr (\"10-0-0-4-30\")")),
                row("block CIDR host bits", invalid(block("b", "{cidr: 10.0.0.1/30}"), "spec.cidr | host bits set")),
                row("block too large", invalid(block("b", "{cidr: 10.0.0.0/16}"), "spec.cidr | /20 at most")),
                row("block affinity form", invalid(block("10-0-0-0-31",
                        "{cidr: 10.0.0.0/31, affinity: n1, allocations: [null, null], unallocated: [0, 1]}"),
                        "spec.affinity | host:<node>")),
                row("allocations size", invalid(block("10-0-0-0-31", "{cidr: 10.0.0.0/31, allocations: [null]}"),
                        "spec.allocations | one entry per address of the block (2), has 1")),
                row("block consistency", invalid(block("10-0-0-0-30",
                        "{cidr: 10.0.0.0/30, allocations: [0, 1, null, null], unallocated: [0, 2, 2, 9], attributes: [{handle_id: h}],"
                                + " sequenceNumberForAllocation: {x: 1, \"4\": 1}}"),
                        "spec.allocations[1] | attribute index 1 out of range [0, 1)",
                        "spec.unallocated[0] | ordinal 0 is allocated",
                        "spec.unallocated[2] | listed twice",
                        "spec.unallocated[3] | ordinal 9 out of range",
                        "spec.sequenceNumberForAllocation[4] | ordinal 4 out of range",
                        "spec.sequenceNumberForAllocation[x] | key must be an ordinal")),
                row("lost ordinal", invalid(block("10-0-0-0-31", "{cidr: 10.0.0.0/31, allocations: [null, null], unallocated: [1]}"),
                        "spec.unallocated | 1 free ordinal(s) are neither allocated nor listed, first 0")),
                row("affinity", valid(affinity("n1-10-0-0-0-26", "{state: confirmed, node: n1, cidr: 10.0.0.0/26, deleted: \"false\"}"))),
                row("pending affinity", valid(affinity("n1-10-0-0-0-26", "{state: pending, node: n1, cidr: 10.0.0.0/26}"))),
                row("affinity fields", invalid(affinity("x", "{state: Confirmed, node: N_1, cidr: 10.0.0.0/26, deleted: \"yes\"}"),
                        "spec.state | one of confirmed, pending, pendingDeletion, got \"Confirmed\"",
                        "spec.node | ", "spec.deleted | \"true\" or \"false\"")),
                row("affinity name", invalid(affinity("x", "{state: pending, node: n1, cidr: 10.0.0.0/26}"),
                        "metadata.name | <spec.node>-<block name of spec.cidr> (\"n1-10-0-0-0-26\")")),
                row("affinity needs node and cidr", invalid(affinity("x", "{state: pending}"),
                        "spec.node | is required", "spec.cidr | is required")),
                row("handle", valid(handle("k8s-pod-network.abc", "{handleID: k8s-pod-network.ABC, block: {10.0.0.0/26: 2}}"))),
                row("handle fields", invalid(handle("other", "{handleID: h1, block: {10.0.0.1/26: -1}}"),
                        "metadata.name | spec.handleID in lower case (\"h1\")",
                        "spec.block[10.0.0.1/26] | key must be a block CIDR",
                        "spec.block[10.0.0.1/26] | count must not be negative")),
                row("handle needs an ID", invalid(handle("h", "{block: {}}"), "spec.handleID | is required")),
                row("IPAM configuration", valid(resource("IPAMConfiguration", "{name: default}",
                        "{strictAffinity: true, autoAllocateBlocks: false, maxBlocksPerHost: 0}"))),
                row("IPAM configuration name and limit", invalid(resource("IPAMConfiguration", "{name: other}",
                        "{maxBlocksPerHost: -1}"), "metadata.name | must be \"default\"",
                        "spec.maxBlocksPerHost | must not be negative")));
    }

    private static Arguments row(String name, ValidationCases c) {
        return Arguments.of(name, c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void validates(String name, ValidationCases c) {
        c.check(Yaml.errors(c.yaml()));
    }

    @Test
    void namesAreCalicos() {
        assertThat(IpamNames.blockName(Cidr.parse("10.0.0.0/26"))).isEqualTo("10-0-0-0-26");
        assertThat(IpamNames.blockName(Cidr.parse("fd00:10:244::/122"))).isEqualTo("fd00-10-244---122");
        assertThat(IpamNames.blockName(Cidr.parse("10.0.0.5/26"))).isEqualTo("10-0-0-0-26");
        assertThat(IpamNames.affinityName("node-1", Cidr.parse("10.0.0.64/26"))).isEqualTo("node-1-10-0-0-64-26");
        assertThat(IpamNames.handleName("k8s-pod-network.ABC")).isEqualTo("k8s-pod-network.abc");
        String longNode = "n".repeat(250);
        String name = IpamNames.affinityName(longNode, Cidr.parse("10.0.0.64/26"));
        assertThat(name).hasSizeLessThan(253).contains("-10-0-0-64-26-").matches(".*-[0-9a-f]{11}");
        assertThat(IpamNames.affinityName(longNode + "x", Cidr.parse("10.0.0.64/26"))).isNotEqualTo(name);
    }
}
