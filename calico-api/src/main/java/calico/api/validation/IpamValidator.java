package calico.api.validation;

import calico.api.model.BlockAffinity;
import calico.api.model.BlockAffinitySpec;
import calico.api.model.IPAMBlock;
import calico.api.model.IPAMBlockSpec;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMHandle;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.net.Cidr;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Checks the IPAM kinds. Calico validates none of them (they are written only by its IPAM code);
 * we check names and the block's internal consistency so that a broken writer is refused
 * before it can corrupt allocation state.
 */
final class IpamValidator {

    private static final FieldPath SPEC = FieldPath.of("spec");
    private static final FieldPath NAME = FieldPath.of("metadata").field("name");
    /** Smallest block prefixes an IP pool allows (blockSize 20..32 and 116..128). */
    private static final int MIN_V4_BLOCK = 20;
    private static final int MIN_V6_BLOCK = 116;

    private IpamValidator() {
    }

    static void validate(IPAMBlock b, Errors errors) {
        MetadataValidator.validate(b.metadata(), b.resourceKind(), true, errors);
        IPAMBlockSpec s = b.spec();
        if (s == null) {
            errors.add(SPEC, "is required");
            return;
        }
        Optional<Cidr> cidr = blockCidr(s.cidr(), SPEC.field("cidr"), errors);
        cidr.ifPresent(c -> nameMustBe(b.metadata(), IpamNames.blockName(c), "the block name of spec.cidr", errors));
        if (s.affinity() != null && !s.affinity().isEmpty()) {
            int colon = s.affinity().indexOf(':');
            String type = colon < 0 ? "" : s.affinity().substring(0, colon);
            if (colon <= 0 || colon == s.affinity().length() - 1 || !(type.equals("host") || type.equals("virtual"))) {
                errors.add(SPEC.field("affinity"), "must be \"host:<node>\" (or \"virtual:<name>\"), got \""
                        + s.affinity() + "\"");
            }
        }
        if (s.sequenceNumber() != null && s.sequenceNumber() < 0) {
            errors.add(SPEC.field("sequenceNumber"), "must not be negative");
        }
        if (cidr.isEmpty()) {
            return;
        }
        int size = 1 << (cidr.get().address().bits() - cidr.get().prefixLength());
        List<Integer> allocations = s.allocations();
        if (allocations.size() != size) {
            errors.add(SPEC.field("allocations"), "must have one entry per address of the block (" + size
                    + "), has " + allocations.size());
            return;
        }
        BitSet used = new BitSet(size);
        for (int i = 0; i < size; i++) {
            Integer a = allocations.get(i);
            if (a != null) {
                used.set(i);
                if (a < 0 || a >= s.attributes().size()) {
                    errors.add(SPEC.field("allocations").index(i), "attribute index " + a + " out of range [0, "
                            + s.attributes().size() + ")");
                }
            }
        }
        BitSet free = new BitSet(size);
        List<Integer> unallocated = s.unallocated();
        for (int i = 0; i < unallocated.size(); i++) {
            int u = unallocated.get(i);
            FieldPath p = SPEC.field("unallocated").index(i);
            if (u < 0 || u >= size) {
                errors.add(p, "ordinal " + u + " out of range [0, " + size + ")");
            } else if (used.get(u)) {
                errors.add(p, "ordinal " + u + " is allocated (spec.allocations[" + u + "] is set)");
            } else if (free.get(u)) {
                errors.add(p, "ordinal " + u + " is listed twice");
            } else {
                free.set(u);
            }
        }
        int lost = size - used.cardinality() - free.cardinality();
        if (lost > 0 && free.cardinality() == unallocated.size()) {
            errors.add(SPEC.field("unallocated"), lost + " free ordinal(s) are neither allocated nor listed, first "
                    + firstLost(used, free, size));
        }
        for (Map.Entry<String, Long> e : new TreeMap<>(s.sequenceNumberForAllocation()).entrySet()) {
            FieldPath p = SPEC.field("sequenceNumberForAllocation").key(e.getKey());
            int ordinal;
            try {
                ordinal = Integer.parseInt(e.getKey());
            } catch (NumberFormatException notANumber) {
                errors.add(p, "key must be an ordinal of the block");
                continue;
            }
            if (ordinal < 0 || ordinal >= size) {
                errors.add(p, "ordinal " + ordinal + " out of range [0, " + size + ")");
            }
        }
    }

    static void validate(BlockAffinity a, Errors errors) {
        MetadataValidator.validate(a.metadata(), a.resourceKind(), true, errors);
        BlockAffinitySpec s = a.spec();
        if (s == null) {
            errors.add(SPEC, "is required");
            return;
        }
        if (s.state() == null || !BlockAffinitySpec.STATES.contains(s.state())) {
            errors.add(SPEC.field("state"), "must be one of confirmed, pending, pendingDeletion, got "
                    + (s.state() == null ? "nothing" : "\"" + s.state() + "\""));
        }
        boolean nodeOk = false;
        if (s.node() == null || s.node().isEmpty()) {
            errors.add(SPEC.field("node"), "is required");
        } else {
            String bad = Names.dnsSubdomain(s.node());
            if (bad != null) {
                errors.add(SPEC.field("node"), bad);
            } else {
                nodeOk = true;
            }
        }
        Optional<Cidr> cidr = blockCidr(s.cidr(), SPEC.field("cidr"), errors);
        if (s.deleted() != null && !s.deleted().isEmpty() && !s.deleted().equals("true") && !s.deleted().equals("false")) {
            errors.add(SPEC.field("deleted"), "must be \"true\" or \"false\", got \"" + s.deleted() + "\"");
        }
        if (nodeOk && cidr.isPresent()) {
            nameMustBe(a.metadata(), IpamNames.affinityName(s.node(), cidr.get()), "<spec.node>-<block name of spec.cidr>",
                    errors);
        }
    }

    static void validate(IPAMHandle h, Errors errors) {
        MetadataValidator.validate(h.metadata(), h.resourceKind(), true, errors);
        if (h.spec() == null) {
            errors.add(SPEC, "is required");
            return;
        }
        String id = h.spec().handleID();
        if (id == null || id.isEmpty()) {
            errors.add(SPEC.field("handleID"), "is required");
        } else {
            nameMustBe(h.metadata(), IpamNames.handleName(id), "spec.handleID in lower case", errors);
        }
        for (Map.Entry<String, Integer> e : new TreeMap<>(h.spec().block()).entrySet()) {
            FieldPath p = SPEC.field("block").key(e.getKey());
            if (Cidr.tryParse(e.getKey()).filter(Cidr::isStrictlyMasked).isEmpty()) {
                errors.add(p, "key must be a block CIDR");
            }
            if (e.getValue() == null || e.getValue() < 0) {
                errors.add(p, "count must not be negative");
            }
        }
    }

    static void validate(IPAMConfiguration c, Errors errors) {
        MetadataValidator.validate(c.metadata(), c.resourceKind(), true, errors);
        if (c.metadata() != null && c.metadata().name() != null && !c.metadata().name().isEmpty()
                && !IpamNames.IPAM_CONFIG_NAME.equals(c.metadata().name())) {
            errors.add(NAME, "must be \"default\": there is one IPAM configuration");
        }
        if (c.spec() != null && c.spec().maxBlocksPerHost() != null && c.spec().maxBlocksPerHost() < 0) {
            errors.add(SPEC.field("maxBlocksPerHost"), "must not be negative (0 means no limit)");
        }
    }

    private static Optional<Cidr> blockCidr(String text, FieldPath path, Errors errors) {
        if (text == null || text.isEmpty()) {
            errors.add(path, "is required");
            return Optional.empty();
        }
        Optional<Cidr> c = Cidr.tryParse(text);
        if (c.isEmpty()) {
            errors.add(path, "invalid CIDR \"" + text + "\"");
            return Optional.empty();
        }
        if (!c.get().isStrictlyMasked()) {
            errors.add(path, "host bits set in \"" + text + "\" (a block is a network)");
            return Optional.empty();
        }
        int min = c.get().version() == 4 ? MIN_V4_BLOCK : MIN_V6_BLOCK;
        if (c.get().prefixLength() < min) {
            errors.add(path, "block prefix /" + c.get().prefixLength() + " is larger than any block size allows (/"
                    + min + " at most)");
            return Optional.empty();
        }
        return c;
    }

    private static void nameMustBe(ObjectMeta meta, String expected, String what, Errors errors) {
        if (meta != null && meta.name() != null && !meta.name().isEmpty() && !meta.name().equals(expected)) {
            errors.add(NAME, "must be " + what + " (\"" + expected + "\"), got \"" + meta.name() + "\"");
        }
    }

    private static int firstLost(BitSet used, BitSet free, int size) {
        for (int i = 0; i < size; i++) {
            if (!used.get(i) && !free.get(i)) {
                return i;
            }
        }
        return -1;
    }
}
