package calico.dataplane.bpf;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Calico's policy programs ({@code src/main/bpf/calico_tc.c}, compiled by clang at build time and
 * shipped as the resource {@value #RESOURCE}) loaded once, with their maps pinned under one
 * directory of a bpffs; {@link #attach} puts both directions on a workload's host-side interface.
 * The maps' layouts are {@link PolicyMaps}.
 */
public final class PolicyProgram implements AutoCloseable {

    public static final String RESOURCE = "/calico/dataplane/bpf/calico_tc.o";
    /** The host endpoints' programs ({@code calico_hep.c}): an object of their own, sharing the pins. */
    public static final String HOST_RESOURCE = "/calico/dataplane/bpf/calico_hep.o";

    private final BpfObject object;
    private final Path pinDir;

    private PolicyProgram(BpfObject object, Path pinDir) {
        this.object = object;
        this.pinDir = pinDir;
    }

    /** Loads the shipped object, pinning its maps in {@code pinDir} (created; its parent must be on a bpffs). */
    public static PolicyProgram load(Path pinDir) {
        return load(shippedObject(), pinDir);
    }

    /**
     * Loads the host endpoints' object, its maps the pins of {@code pinDir} (the same maps as the
     * workload programs': load either first, the second reuses the first's pins).
     */
    public static PolicyProgram loadHost(Path pinDir) {
        return loadHost(pinDir, PolicyMaps.CONNTRACK_DEFAULT_SIZE);
    }

    /** As {@link #loadHost(Path)}, the conntrack map sized {@code conntrackSize} (as the workload object's). */
    public static PolicyProgram loadHost(Path pinDir, int conntrackSize) {
        return load("calico_hep", resource(HOST_RESOURCE), pinDir, conntrackSize);
    }

    /**
     * Loads the shipped workload object with its conntrack map sized {@code conntrackSize}
     * ({@code bpfMapSizeConntrack}); a pinned conntrack map of another size is made anew (its entries lost).
     */
    public static PolicyProgram load(Path pinDir, int conntrackSize) {
        return load("calico_tc", shippedObject(), pinDir, conntrackSize);
    }

    /** Loads {@code elf} (tests: a broken object) as the policy program. */
    public static PolicyProgram load(byte[] elf, Path pinDir) {
        return load("calico_tc", elf, pinDir, PolicyMaps.CONNTRACK_DEFAULT_SIZE);
    }

    /** {@link #load(byte[], Path)} with the conntrack map sized {@code conntrackSize}. */
    public static PolicyProgram load(byte[] elf, Path pinDir, int conntrackSize) {
        return load("calico_tc", elf, pinDir, conntrackSize);
    }

    private static PolicyProgram load(String name, byte[] elf, Path pinDir, int conntrackSize) {
        try {
            Files.createDirectories(pinDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the BPF pin directory " + pinDir, e);
        }
        PolicyProgram p = new PolicyProgram(BpfObject.load(name, elf, pinDir, Map.of(PolicyMaps.CONNTRACK, conntrackSize)), pinDir);
        // A pin no map of this object has is an older layout's (its name carried the old version): unpinned.
        try (java.util.stream.Stream<Path> pins = Files.list(pinDir)) {
            for (Path stale : pins.filter(f -> !PolicyMaps.ALL.contains(f.getFileName().toString())
                    && !f.getFileName().toString().equals(LINKS)).toList()) {
                Files.deleteIfExists(stale);
            }
        } catch (IOException e) {
            p.close();
            throw new UncheckedIOException("cannot remove stale pins in " + pinDir, e);
        }
        return p;
    }

    /** {@return the bytes of the shipped object} */
    public static byte[] shippedObject() {
        return resource(RESOURCE);
    }

    private static byte[] resource(String name) {
        try (InputStream in = PolicyProgram.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is not on the classpath (built by native-dataplane's clang step)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public BpfMap map(String name) {
        return object.map(name);
    }

    public Path pinDir() {
        return pinDir;
    }

    /** Creates the interface's clsact qdisc if it has none (see {@link Tc#createHooks}). */
    public void createHooks(int ifindex, String ifName) {
        Tc.createHooks(ifindex, ifName, object.name().equals("calico_hep") ? "calico_hep_in/calico_hep_out"
                : "calico_to_ep/calico_from_ep");
    }

    /** Attaches the program of {@code dir} to the interface's hook for it (the clsact qdisc must exist). */
    public void attach(int ifindex, String ifName, PolicyMaps.Dir dir) {
        Tc.attach(ifindex, ifName, dir.hook, object.programFd(dir.program), dir.program);
    }

    /** Attaches the program of {@code dir} to the interface's hook for it as a tcx link pinned and held in {@code links}. */
    public void attachTcx(int ifindex, String ifName, PolicyMaps.Dir dir, TcxLinks links) {
        links.attach(ifindex, ifName, dir.hook, object.programFd(dir.program), dir.program,
                linkPin(pinDir, ifName, dir.hook));
    }

    /** {@return where the tcx link of {@code ifName}'s hook {@code hook} is pinned} under the pin directory {@code pinDir} */
    public static Path linkPin(Path pinDir, String ifName, TcDirection hook) {
        return Tcx.pin(pinDir.resolve(LINKS), ifName, hook);
    }

    /** The pin directory's subdirectory of tcx links. */
    public static final String LINKS = "links";

    /** {@return the descriptor of {@code dir}'s program} (for BPF_PROG_TEST_RUN) */
    public int programFd(PolicyMaps.Dir dir) {
        return object.programFd(dir.program);
    }

    @Override
    public void close() {
        object.close();
    }
}
