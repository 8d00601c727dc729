package calico.ctl;

import calico.api.codec.ResourceCodec;
import calico.api.codec.ResourceParseException;
import calico.api.model.ClusterInformation;
import calico.api.model.ObjectMeta;
import calico.api.model.Resource;
import calico.api.model.ResourceKey;
import calico.api.model.ResourceKind;
import calico.api.model.Tier;
import calico.api.validation.FieldError;
import calico.api.validation.ResourceValidator;
import calico.api.validation.ValidationException;
import calico.libcalico.datastore.Datastore;
import calico.libcalico.datastore.DatastoreException;
import calico.libcalico.datastore.ListResult;
import calico.libcalico.datastore.config.DatastoreConfig;
import calico.libcalico.ipam.IpamClient;
import calico.libcalico.ipam.IpamException;
import calico.libcalico.ipam.IpamOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A small {@code calicoctl}: applies, creates, replaces, gets, patches, labels and deletes
 * {@code projectcalico.org/v3} resources in the datastore named by the environment, and says its version. Exit status 0 on success, 1 when the
 * datastore or the input refuses the request (the message names the field), 2 on a usage error.
 *
 * <p>A file is parsed and validated whole before anything is written: one bad document means
 * nothing from that file is written.
 */
public final class CalicoCtl {

    /** The Calico release whose behaviour this calicoctl follows. */
    static final String VERSION = "v3.30.0-java";
    /** Calico prints its build's commit; ours is not stamped into the build. */
    static final String GIT_COMMIT = "unknown";

    private final InputStream in;
    private final PrintStream out;
    private final PrintStream err;
    private final Function<Map<String, String>, Datastore> datastores;
    private final ResourceCodec codec = ResourceCodec.get();

    public CalicoCtl(InputStream in, PrintStream out, PrintStream err,
                     Function<Map<String, String>, Datastore> datastores) {
        this.in = in;
        this.out = out;
        this.err = err;
        this.datastores = datastores;
    }

    public static void main(String[] args) {
        var ctl = new CalicoCtl(System.in, System.out, System.err, env -> DatastoreConfig.fromEnvironment(env).open());
        System.exit(ctl.run(List.of(args), System.getenv()));
    }

    /** {@return the exit status} of running one command against the datastore {@code env} names. */
    public int run(List<String> args, Map<String, String> env) {
        Command command;
        try {
            command = CommandLine.parse(args);
        } catch (CommandLine.UsageException e) {
            err.println("calicoctl: " + e.getMessage());
            err.println(CommandLine.USAGE);
            return 2;
        }
        if (command instanceof Command.Help) {
            out.println(CommandLine.USAGE);
            return 0;
        }
        if (command instanceof Command.NodeStatus) {
            // Reads this host's BIRD, not the datastore.
            return new NodeStatusCommand(NodeStatusCommand.socket(env), out, err).run();
        }
        try {
            if (command instanceof Command.Convert c) {
                return new PolicyConvert(codec, out, err).run(read(c.file()), c);
            }
            List<Resource> input = readInput(command);
            try (Datastore store = datastores.apply(env)) {
                return execute(command, input, store, env);
            }
        } catch (ResourceParseException | ValidationException e) {
            err.println("calicoctl: " + e.getMessage());
            return 1;
        } catch (DatastoreException e) {
            err.println("calicoctl: " + e.getMessage() + (e.retryable() ? " (the datastore may be down; retry)" : ""));
            return 1;
        } catch (IpamException e) {
            err.println("calicoctl: " + e.getMessage());
            return 1;
        } catch (IllegalArgumentException | IllegalStateException e) {
            // configuration errors (DATASTORE_TYPE, ETCD_*) name their variable; refused preconditions say which
            err.println("calicoctl: " + e.getMessage());
            return 1;
        }
    }

    /** Parses and validates the file of a command that has one, before the datastore is touched. */
    private List<Resource> readInput(Command command) {
        String file;
        String namespace;
        if (command instanceof Command.Apply a) {
            file = a.file();
            namespace = a.namespace();
        } else if (command instanceof Command.Create c) {
            file = c.file();
            namespace = c.namespace();
        } else if (command instanceof Command.Replace r) {
            file = r.file();
            namespace = r.namespace();
        } else if (command instanceof Command.Delete d && d.file() != null) {
            file = d.file();
            namespace = d.namespace();
        } else {
            return List.of();
        }
        List<Resource> parsed = codec.parseAll(read(file));
        List<Resource> ready = new ArrayList<>(parsed.size());
        for (Resource r : parsed) {
            Resource placed = inNamespace(r, namespace);
            ResourceValidator.get().defaultAndValidate(placed);
            ready.add(placed);
        }
        return ready;
    }

    /** {@return the exit status}: 0, or 1 when an ipam command reports a finding (address not allocated, problems). */
    private int execute(Command command, List<Resource> input, Datastore store, Map<String, String> env) {
        if (command instanceof Command.Apply) {
            writeAll(input, r -> apply(store, r), "applied");
        } else if (command instanceof Command.Create) {
            writeAll(input, store::create, "created");
        } else if (command instanceof Command.Replace) {
            writeAll(input, r -> replace(store, r), "replaced");
        } else if (command instanceof Command.Patch p) {
            Resource current = existing(store, p.kind(), p.namespace(), p.name());
            Resource patched = ResourcePatch.apply(codec, current, p.patch(), p.type());
            update(store, current, patched);
            out.println("Successfully patched 1 '" + p.kind().kind() + "' resource");
        } else if (command instanceof Command.Label l) {
            label(store, l);
        } else if (command instanceof Command.Version) {
            version(store);
        } else if (command instanceof Command.Delete d) {
            List<ResourceKey> keys = d.file() != null ? input.stream().map(Resource::key).toList()
                    : List.of(ResourceKey.of(d.kind(), d.kind().namespaced() ? namespaceOrDefault(d.namespace()) : null, d.name()));
            writeAll(keys, k -> delete(store, k, d.skipNotExists()), "deleted");
        } else if (command instanceof Command.Get g) {
            get(store, g);
        } else if (command instanceof Command.DatastoreLock l) {
            new DatastoreMigration(store, DatastoreConfig.fromEnvironment(env).type(), out).lock(l.lock());
        } else if (command instanceof Command.DatastoreExport) {
            new DatastoreMigration(store, DatastoreConfig.fromEnvironment(env).type(), out).export();
        } else if (command instanceof Command.DatastoreImport i) {
            new DatastoreMigration(store, DatastoreConfig.fromEnvironment(env).type(), out).importFrom(read(i.file()));
        } else if (command instanceof Command.IpamShow || command instanceof Command.IpamRelease
                || command instanceof Command.IpamCheck || command instanceof Command.IpamConfigure
                || command instanceof Command.IpamSplit) {
            return new IpamCommands(store, new IpamClient(store, IpamOptions.defaults()), out, err).run(command);
        } else {
            throw new IllegalStateException("unhandled command " + command);
        }
        return 0;
    }

    /** Create, or overwrite when it exists: the resourceVersion in a file is never a precondition. */
    private static Resource apply(Datastore store, Resource r) {
        Resource fresh = r.withMetadata(r.metadata().withResourceVersion(null));
        try {
            return store.create(fresh);
        } catch (DatastoreException.AlreadyExists e) {
            return store.update(fresh);
        }
    }

    /** Overwrite an existing resource; its resourceVersion, when the file gives one, must still be current. */
    private static Resource replace(Datastore store, Resource r) {
        if (r.metadata().resourceVersion() == null || r.metadata().resourceVersion().isEmpty()) {
            Resource current = store.get(r.key()).orElseThrow(() -> new DatastoreException.NotFound(r.key()));
            return store.update(r.withMetadata(r.metadata().withResourceVersion(current.metadata().resourceVersion())));
        }
        return store.update(r);
    }

    private static Resource existing(Datastore store, ResourceKind kind, String namespace, String name) {
        ResourceKey key = ResourceKey.of(kind, kind.namespaced() ? namespaceOrDefault(namespace) : null, name);
        return store.get(key).orElseThrow(() -> new DatastoreException.NotFound(key));
    }

    /**
     * Writes {@code changed}, validated as any input, on the condition that {@code current} is still what is
     * stored (a concurrent writer makes this fail with a conflict rather than be overwritten).
     */
    private static Resource update(Datastore store, Resource current, Resource changed) {
        Resource placed = changed.withMetadata(changed.metadata().withResourceVersion(
                current.metadata().resourceVersion()));
        ResourceValidator.get().defaultAndValidate(placed);
        return store.update(placed);
    }

    private void label(Datastore store, Command.Label l) {
        Resource current = existing(store, l.kind(), l.namespace(), l.name());
        Map<String, String> labels = new TreeMap<>(current.metadata().labels() == null
                ? Map.of() : current.metadata().labels());
        String what = l.kind().plural() + " " + l.name();
        if (l.value() == null) {
            if (labels.remove(l.key()) == null) {
                throw new ValidationException(current.key().toString(), List.of(new FieldError("metadata.labels",
                        "has no label \"" + l.key() + "\" to remove")));
            }
        } else {
            String old = labels.get(l.key());
            if (old != null && !l.overwrite()) {
                throw new ValidationException(current.key().toString(), List.of(new FieldError("metadata.labels",
                        "already has \"" + l.key() + "\" (value \"" + old + "\"): add --overwrite to replace it")));
            }
            labels.put(l.key(), l.value());
        }
        update(store, current, current.withMetadata(current.metadata().withLabels(labels)));
        out.println(l.value() == null ? "Successfully removed label " + l.key() + " from " + what
                : "Successfully set label " + l.key() + " on " + what);
    }

    /** The client's version, then the cluster's from ClusterInformation {@code default} (as far as it is known). */
    private void version(Datastore store) {
        out.println("Client Version:    " + VERSION);
        out.println("Git commit:        " + GIT_COMMIT);
        var info = store.get(ResourceKey.of(ResourceKind.CLUSTER_INFORMATION, null, "default"))
                .map(ClusterInformation.class::cast).map(ClusterInformation::spec);
        out.println("Cluster Version:   " + info.map(i -> i.calicoVersion()).filter(v -> v != null && !v.isEmpty())
                .orElse("unknown"));
        out.println("Cluster Type:      " + info.map(i -> i.clusterType()).filter(v -> v != null && !v.isEmpty())
                .orElse("unknown"));
    }

    private static Object delete(Datastore store, ResourceKey key, boolean skipNotExists) {
        try {
            return store.delete(key, null);
        } catch (DatastoreException.NotFound e) {
            if (skipNotExists) {
                return null;
            }
            throw e;
        }
    }

    /** Writes in order; on a failure says how many went through, as calicoctl does. */
    private <T> void writeAll(List<T> items, Function<T, ?> write, String verb) {
        for (int i = 0; i < items.size(); i++) {
            try {
                write.apply(items.get(i));
            } catch (DatastoreException e) {
                if (i > 0) {
                    err.println("Partial success: " + verb + " the first " + i + " out of " + items.size()
                            + " resources:");
                }
                throw e;
            }
        }
        out.println("Successfully " + verb + " " + items.size() + " resource(s)");
    }

    private void get(Datastore store, Command.Get g) {
        ResourceKind kind = g.kind();
        List<Resource> items;
        String revision = null;
        if (g.name() != null) {
            String ns = kind.namespaced() ? namespaceOrDefault(g.namespace()) : null;
            Resource r = store.get(ResourceKey.of(kind, ns, g.name()))
                    .orElseThrow(() -> new DatastoreException.NotFound(ResourceKey.of(kind, ns, g.name())));
            items = List.of(r);
        } else {
            String ns = !kind.namespaced() || g.allNamespaces() ? null : namespaceOrDefault(g.namespace());
            ListResult list = store.list(kind, ns, g.selector());
            items = list.items();
            revision = Long.toString(list.revision());
        }
        switch (g.output()) {
            case YAML -> out.print(g.name() != null ? codec.toYaml(items.get(0))
                    : codec.writeYaml(codec.toListTree(kind, items, revision)));
            case JSON -> out.println(codec.writePrettyJson(g.name() != null ? codec.toTree(items.get(0))
                    : codec.toListTree(kind, items, revision)));
            // As calicoctl, the template runs over a slice holding the resource, or the list.
            case GO_TEMPLATE -> out.print(g.template().execute(GoTemplate.slice(g.name() != null
                    ? codec.toTree(items.get(0)) : codec.toListTree(kind, items, revision))));
            case TABLE, WIDE, CUSTOM_COLUMNS -> {
                if (kind == ResourceKind.TIER) { // Calico lists tiers in their order, unordered last
                    items = items.stream().sorted(Comparator.comparing(
                            (Resource r) -> ((Tier) r).spec().order(),
                            Comparator.nullsLast(Comparator.naturalOrder()))).toList();
                }
                boolean withNamespace = g.allNamespaces() || (g.namespace() != null && !g.namespace().isEmpty());
                String asNumber = kind == ResourceKind.NODE ? clusterAsNumber(store) : "";
                out.print(new ResourceTable(asNumber).render(kind, items.stream().map(codec::toTree).toList(),
                        g.output() == Command.Output.WIDE, g.columns(), withNamespace));
            }
        }
    }

    /** The AS number nodes without their own use: BGPConfiguration {@code default}'s, else Calico's 64512. */
    private static String clusterAsNumber(Datastore store) {
        return store.get(ResourceKey.of(ResourceKind.BGP_CONFIGURATION, null, "default"))
                .map(r -> ResourceCodec.get().toTree(r).path("spec").path("asNumber"))
                .filter(n -> !n.isMissingNode() && !n.isNull()).map(n -> n.asText()).orElse("64512");
    }

    /** Namespaced resources without a namespace go to {@code -n}, else {@code default}, as calicoctl does. */
    private static Resource inNamespace(Resource r, String namespace) {
        if (!r.resourceKind().namespaced()) {
            return r;
        }
        ObjectMeta m = r.metadata();
        if (m.namespace() != null && !m.namespace().isEmpty()) {
            if (namespace != null && !namespace.equals(m.namespace())) {
                throw new ValidationException(r.key().toString(), List.of(new FieldError(
                        "metadata.namespace", "is \"" + m.namespace() + "\" but -n says \"" + namespace + "\"")));
            }
            return r;
        }
        return r.withMetadata(m.withNamespace(namespaceOrDefault(namespace)));
    }

    private static String namespaceOrDefault(String namespace) {
        return namespace == null || namespace.isEmpty() ? "default" : namespace;
    }

    private String read(String file) {
        try {
            if (file.equals("-")) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            return Files.readString(Path.of(file));
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("-f: no such file \"" + file + "\"");
        } catch (IOException e) {
            throw new IllegalArgumentException("-f: cannot read \"" + file + "\": " + e.getMessage());
        }
    }
}
