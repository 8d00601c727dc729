package calico.libcalico.datastore.memory;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.Resource;
import calico.libcalico.datastore.DatastoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What a {@code memory} datastore holds when it opens: the resources of a manifest (YAML or JSON
 * documents, {@code *List} documents expanded, as calicoctl applies them) named by
 * {@code CALICO_MEMORY_MANIFEST} (ours: Calico has no memory datastore), else nothing. A service on
 * its own memory store (felix's image training run, a single process tried alone) needs at least
 * ClusterInformation {@code default} with {@code datastoreReady: true} before it starts work.
 *
 * <p>The file is read and every resource admitted (created in a scratch store) once, when the
 * configuration is read, so a bad manifest fails start-up naming the variable, the file and the
 * reason; each store opened afterwards starts from the same resources, created in the manifest's
 * order.
 *
 * @param file      the manifest read; {@code null} for none
 * @param resources its resources, in order
 */
public record MemoryManifest(Path file, List<Resource> resources) {

    /** The variable naming the manifest. */
    public static final String VARIABLE = "CALICO_MEMORY_MANIFEST";

    /** An empty store. */
    public static final MemoryManifest NONE = new MemoryManifest(null, List.of());

    public MemoryManifest {
        resources = List.copyOf(resources);
    }

    /** {@return the manifest {@code env} names ({@link #VARIABLE}), read and checked}, else {@link #NONE} */
    public static MemoryManifest fromEnvironment(Map<String, String> env) {
        String named = env.getOrDefault(VARIABLE, "").trim();
        return named.isEmpty() ? NONE : read(Path.of(named));
    }

    /**
     * {@return the resources of {@code file}}, each admitted as the memory datastore admits a create
     *
     * @throws IllegalArgumentException naming {@link #VARIABLE}, the file and what is wrong (an unreadable
     *                                  file, a document that is not a resource, a field the validator refuses, a
     *                                  resource given twice)
     */
    public static MemoryManifest read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw refused(file, "cannot be read: " + e);
        }
        List<Resource> resources;
        try {
            resources = ResourceCodec.get().parseAll(text);
        } catch (ResourceParseException e) {
            throw refused(file, e.getMessage());
        }
        MemoryManifest manifest = new MemoryManifest(file, resources);
        manifest.open().close(); // admission, as each later open will do it
        return manifest;
    }

    /**
     * {@return a new memory datastore holding these resources}
     *
     * @throws IllegalArgumentException naming the resource the store refused and why
     */
    public MemoryDatastore open() {
        MemoryDatastore store = new MemoryDatastore();
        for (Resource r : resources) {
            try {
                store.create(r);
            } catch (RuntimeException e) {
                store.close();
                String why = e instanceof DatastoreException.AlreadyExists ? "given twice" : e.getMessage();
                throw refused(file, r.key() + ": " + why);
            }
        }
        return store;
    }

    private static IllegalArgumentException refused(Path file, String reason) {
        return new IllegalArgumentException(VARIABLE + ": " + file + ": " + reason);
    }
}
