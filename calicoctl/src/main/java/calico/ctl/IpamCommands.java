package calico.ctl;

import calico.api.codec.ResourceCodec;
import calico.api.model.IPAMConfiguration;
import calico.api.model.IPAMConfigurationSpec;
import calico.api.model.IPPool;
import calico.api.model.IpamNames;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.net.Cidr;
import calico.api.net.IpAddress;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import calico.libcalico.ipam.IpamCheckReport;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamUsage;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code calicoctl ipam show|release|check|configure|split}, printed the way Calico's calicoctl prints them. */
final class IpamCommands {

    private static final List<String> HEADER = List.of("GROUPING", "CIDR", "IPS TOTAL", "IPS IN USE", "IPS FREE");

    private final Datastore store;
    private final IpamClient ipam;
    private final PrintStream out;
    private final PrintStream err;

    IpamCommands(Datastore store, IpamClient ipam, PrintStream out, PrintStream err) {
        this.store = store;
        this.ipam = ipam;
        this.out = out;
        this.err = err;
    }

    /** {@return the exit status}: 1 when {@code release} names an address that is not allocated. */
    int run(Command command) {
        if (command instanceof Command.IpamShow s) {
            show(s.showBlocks());
            return 0;
        }
        if (command instanceof Command.IpamRelease r) {
            return r.ip() != null ? release(r.ip()) : releaseFromReports(r.reports(), r.force());
        }
        if (command instanceof Command.IpamCheck c) {
            check(c.output());
            return 0;
        }
        if (command instanceof Command.IpamConfigure c) {
            configure(c.strictAffinity());
            return 0;
        }
        if (command instanceof Command.IpamSplit s) {
            return split(s);
        }
        throw new IllegalStateException("not an ipam command: " + command);
    }

    private void show(boolean showBlocks) {
        IpamUsage usage = ipam.usage();
        List<List<String>> rows = new ArrayList<>();
        for (IpamUsage.PoolUsage p : usage.pools()) {
            rows.add(row("IP Pool", p.cidr().toString(), p.size(), BigInteger.valueOf(p.inUse())));
            if (showBlocks) {
                for (IpamUsage.BlockUsage b : p.blocks()) {
                    rows.add(row("Block", b.cidr().toString(), BigInteger.valueOf(b.size()), BigInteger.valueOf(b.inUse())));
                }
            }
        }
        if (showBlocks) {
            for (IpamUsage.BlockUsage b : usage.orphanBlocks()) {
                rows.add(row("Block", b.cidr() + " (no pool)", BigInteger.valueOf(b.size()), BigInteger.valueOf(b.inUse())));
            }
        }
        // IPS TOTAL right-aligned, as tablewriter does with numbers.
        BorderedTable.print(out, HEADER, rows, Set.of(2));
    }

    private int release(String text) {
        IpAddress ip;
        try {
            ip = IpAddress.parse(text);
        } catch (IllegalArgumentException e) {
            err.println("calicoctl: --ip: " + e.getMessage());
            return 1;
        }
        if (!ipam.releaseIps(List.of(ip)).isEmpty()) {
            err.println("calicoctl: IP address " + ip + " is not assigned");
            return 1;
        }
        out.println("Successfully released IP address " + ip);
        return 0;
    }

    private void check(String output) {
        out.println("Checking IPAM for inconsistencies...");
        out.println();
        IpamCheckReport r = ipam.check();
        IpamLeaks leaks = new IpamLeaks(store, ipam, ResourceCodec.get().jsonMapper());
        List<IpamLeaks.Owned> owned = leaks.owned();
        List<String> problems = new ArrayList<>(r.problems());
        for (IpamLeaks.Owned o : owned) {
            if (o.leaked()) {
                var a = o.allocation();
                problems.add(a.ip() + " leaked: its owner (" + owner(a.attributes()) + ") no longer exists; handle "
                        + a.handleId());
            }
        }
        out.println("Found " + r.blocks() + " IPAM blocks.");
        out.println("Found " + r.handles() + " IPAM handles.");
        out.println("Found " + r.allocations() + " in-use IPs.");
        problems.forEach(p -> out.println("  " + p));
        out.println("Check complete; found " + problems.size() + " problems.");
        if (output != null) {
            try {
                Files.writeString(Path.of(output), ResourceCodec.get().writePrettyJson(leaks.report(owned)));
            } catch (IOException e) {
                throw new IllegalArgumentException("--output: cannot write \"" + output + "\": " + e.getMessage());
            }
        }
    }

    private static String owner(Map<String, String> attributes) {
        return attributes.containsKey("pod") ? "pod " + attributes.get("namespace") + "/" + attributes.get("pod")
                : "node " + attributes.get("node");
    }

    private int releaseFromReports(List<String> files, boolean force) {
        var reports = new LinkedHashMap<String, JsonNode>();
        for (String f : files) {
            try {
                reports.put(f, ResourceCodec.get().jsonMapper().readTree(Files.readString(Path.of(f))));
            } catch (IOException e) {
                throw new IllegalArgumentException("--from-report: cannot read \"" + f + "\": " + e.getMessage());
            }
        }
        return new IpamLeaks(store, ipam, ResourceCodec.get().jsonMapper()).release(reports, force, out, err);
    }

    /** Sets strictAffinity on IPAMConfiguration {@code default} (created when absent), keeping its other fields. */
    private void configure(boolean strictAffinity) {
        ResourceKey key = ResourceKey.of(ResourceKind.IPAM_CONFIGURATION, null, IpamNames.IPAM_CONFIG_NAME);
        var current = store.get(key).map(IPAMConfiguration.class::cast);
        if (current.isPresent()) {
            IPAMConfigurationSpec old = current.get().spec();
            store.update(new IPAMConfiguration(current.get().metadata(),
                    new IPAMConfigurationSpec(strictAffinity, old.autoAllocateBlocks(), old.maxBlocksPerHost())));
        } else {
            store.create(new IPAMConfiguration(ObjectMeta.named(IpamNames.IPAM_CONFIG_NAME),
                    new IPAMConfigurationSpec(strictAffinity, null, null)));
        }
        out.println("Successfully set StrictAffinity to: " + strictAffinity);
    }

    /**
     * Replaces a pool by {@code number} equal pools, as Calico's calicoctl does, while the datastore is locked
     * (nothing allocates meanwhile): the old pool is disabled, each part is a copy of it named
     * {@code split-<old>-<i>} and enabled, then the old pool is deleted. Blocks and their affinities stay where
     * they are: each lies inside one of the parts.
     */
    private int split(Command.IpamSplit s) {
        if (!DatastoreMigration.locked(store)) {
            err.println("calicoctl: Datastore is not locked. Run the `calicoctl datastore migrate lock` command in order"
                    + " split the IP pools.");
            return 1;
        }
        IPPool pool = findPool(s);
        int n;
        try {
            n = Integer.parseInt(s.number());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Error reading number to split IP pools into. " + s.number()
                    + " is not a valid number");
        }
        Cidr cidr = Cidr.parse(pool.spec().cidr());
        List<Cidr> parts = parts(cidr, n);
        ResourceCodec codec = ResourceCodec.get();
        List<Resource> split = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            ObjectNode tree = (ObjectNode) codec.toTree(pool);
            ObjectNode meta = (ObjectNode) tree.path("metadata");
            meta.put("name", "split-" + truncate(pool.metadata().name()) + "-" + i);
            List.of("uid", "resourceVersion", "generation", "creationTimestamp", "selfLink").forEach(meta::remove);
            ObjectNode spec = (ObjectNode) tree.path("spec");
            spec.put("cidr", parts.get(i).toString());
            spec.put("disabled", false);
            split.add(codec.fromTree(tree, "").get(0));
        }
        // The parts overlap the pool they replace, which the datastore refuses beside it (Calico's calicoctl
        // writes past that check): the old pool, disabled, goes first, and comes back if a part is refused.
        IPPool disabled = (IPPool) ResourcePatch.apply(codec, pool, "{\"spec\":{\"disabled\":true}}",
                ResourcePatch.Type.MERGE);
        store.delete(store.update(disabled).key(), null);
        List<Resource> created = new ArrayList<>();
        try {
            for (Resource part : split) {
                created.add(store.create(part));
            }
        } catch (DatastoreException e) {
            created.forEach(c -> store.delete(c.key(), null));
            store.create(pool.withMetadata(pool.metadata().withResourceVersion(null).withCreation(null, null)));
            throw e;
        }
        out.print("IP Pool " + pool.metadata().name() + " was successfully split into " + n + " smaller pools.");
        for (Resource part : created) {
            out.println("Created " + part.metadata().name() + " with CIDR " + ((IPPool) part).spec().cidr() + ".");
        }
        out.print("Please refer to the documentation for final steps.");
        out.flush();
        return 0;
    }

    private IPPool findPool(Command.IpamSplit s) {
        if (s.name() != null) {
            return store.get(ResourceKey.of(ResourceKind.IP_POOL, null, s.name())).map(IPPool.class::cast)
                    .orElseThrow(() -> new DatastoreException.NotFound(ResourceKey.of(ResourceKind.IP_POOL, null, s.name())));
        }
        return store.list(ResourceKind.IP_POOL).items().stream().map(IPPool.class::cast)
                .filter(p -> p.spec().cidr().equals(s.cidr())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Unable to find IP pool covering the specified CIDR "
                        + s.cidr()));
    }

    /** {@return {@code cidr} cut into {@code n} equal parts in address order}; n a power of two above 1. */
    static List<Cidr> parts(Cidr cidr, int n) {
        if (n < 2 || Integer.bitCount(n) != 1) {
            throw new IllegalArgumentException("Error splitting the CIDR " + cidr + " into " + n
                    + " CIDRs: Number to split CIDR into is not a valid power of 2: " + n);
        }
        int extra = Integer.numberOfTrailingZeros(n);
        int bits = cidr.address().bits();
        int prefix = cidr.prefixLength() + extra;
        if (prefix > bits) {
            throw new IllegalArgumentException("Error splitting the CIDR " + cidr + " into " + n + " CIDRs: The CIDR "
                    + cidr + " is not large enough to be split into " + n + " parts");
        }
        BigInteger base = new BigInteger(1, cidr.network().address().toBytes());
        BigInteger step = BigInteger.ONE.shiftLeft(bits - prefix);
        List<Cidr> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            byte[] raw = base.add(step.multiply(BigInteger.valueOf(i))).toByteArray();
            byte[] addr = new byte[bits / 8];
            int copy = Math.min(raw.length, addr.length);
            System.arraycopy(raw, raw.length - copy, addr, addr.length - copy, copy);
            out.add(new Cidr(IpAddress.of(addr), prefix));
        }
        return out;
    }

    /** Calico keeps a part's name within 253 characters by cutting the old name to 245. */
    private static String truncate(String name) {
        return name.length() + "split--0".length() > 253 ? name.substring(0, 245) : name;
    }

    private static List<String> row(String grouping, String cidr, BigInteger total, BigInteger inUse) {
        BigInteger free = total.subtract(inUse);
        return List.of(grouping, cidr, total.toString(), inUse + " (" + percent(inUse, total) + ")",
                free + " (" + percent(free, total) + ")");
    }

    private static String percent(BigInteger part, BigInteger total) {
        if (total.signum() == 0) {
            return "0%";
        }
        return new BigDecimal(part).multiply(BigDecimal.valueOf(100)).divide(new BigDecimal(total), 0, RoundingMode.HALF_EVEN)
                + "%";
    }
}
