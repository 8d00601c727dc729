package calico.felix.dataplane;

import calico.felix.calc.DataplaneUpdate.WorkloadEndpointUpdate;
import calico.felix.calc.DataplaneUpdate.WorkloadKey;
import calico.felix.dataplane.rules.DataplaneModel;
import calico.felix.dataplane.rules.PolicyDriver;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Calico's endpoint status files ({@code endpointStatusPathPrefix}): after every batch the dataplane programmed
 * (once in sync), an empty file {@code <prefix>/endpoint-status/<orchestrator> <workload> <endpoint>} (each part
 * path-escaped, {@link calico.felix.calc.DataplaneUpdate.WorkloadKey#statusFileName}) exists for each local
 * workload endpoint and for no other, so that a CNI plugin waiting for a pod's policy sees it programmed. An empty
 * prefix turns the files off (and leaves any that exist). Runs on the dataplane thread (the model's writer), as
 * a {@link DataplaneObserver}; a file that cannot be written is logged and tried again after the next batch.
 */
public final class EndpointStatusFiles implements DataplaneObserver {

    /** Calico's directory under the prefix. */
    public static final String DIRECTORY = "endpoint-status";

    private static final Logger log = LoggerFactory.getLogger(EndpointStatusFiles.class);

    private final Supplier<DataplaneModel> model;
    /** The directory the files below were written to (null: none yet); a new prefix lists its directory again. */
    private Path dir;
    private final Set<String> written = new TreeSet<>();

    /** {@code model}: the dataplane's, read after each applied batch. */
    public EndpointStatusFiles(Supplier<DataplaneModel> model) {
        this.model = model;
    }

    @Override
    public void applied(Duration took, PolicyDriver.ApplyStats stats, PolicyDriver.Programmed programmed) {
        if (stats != null) {
            sync();
        }
    }

    /** Brings the directory up to the model; {@return the file names it holds now}, empty when off. */
    public synchronized Set<String> sync() {
        DataplaneModel m = model.get();
        if (m == null || !m.inSync()) {
            return Set.of();
        }
        String prefix = m.config().endpointStatusPathPrefix();
        if (prefix.isEmpty()) {
            dir = null;
            written.clear();
            return Set.of();
        }
        Path want = Path.of(prefix, DIRECTORY);
        Set<String> desired = new TreeSet<>();
        for (WorkloadEndpointUpdate w : m.workloads().values()) {
            // an endpoint whose Calico key is unknown (tests) is named by its ID
            desired.add((w.workloadKey() != null ? w.workloadKey() : new WorkloadKey("", w.id(), ""))
                    .statusFileName());
        }
        try {
            if (!want.equals(dir)) {
                Files.createDirectories(want);
                written.clear();
                try (DirectoryStream<Path> ls = Files.newDirectoryStream(want)) {
                    ls.forEach(p -> written.add(p.getFileName().toString()));
                }
                dir = want;
            }
            for (String name : desired) {
                if (!written.contains(name)) {
                    Path f = want.resolve(name);
                    if (!Files.exists(f)) {
                        Files.createFile(f);
                    }
                    written.add(name);
                }
            }
            for (String name : new TreeSet<>(written)) {
                if (!desired.contains(name)) {
                    try {
                        Files.delete(want.resolve(name));
                    } catch (NoSuchFileException gone) {
                        // someone removed it already
                    }
                    written.remove(name);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.warn("endpointStatusPathPrefix: cannot write the endpoint status files under {}: {} (tried again after "
                    + "the next batch)", want, e.toString());
            dir = null; // list the directory again next time
        }
        return Set.copyOf(written);
    }
}
