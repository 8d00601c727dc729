package calico.ctl;

import calico.api.model.ResourceKind;

/** One parsed {@code calicoctl} invocation. */
sealed interface Command {

    /** Create the resources of a file, or overwrite them when they exist. */
    record Apply(String file, String namespace) implements Command {
    }

    /** Create the resources of a file; fails on any that exists. */
    record Create(String file, String namespace) implements Command {
    }

    /** Overwrite the resources of a file, each of which must exist (a resourceVersion in the file is a precondition). */
    record Replace(String file, String namespace) implements Command {
    }

    /** Change one resource by a patch ({@code --type}: strategic, merge or json). */
    record Patch(ResourceKind kind, String name, String namespace, String patch, ResourcePatch.Type type)
            implements Command {
    }

    /** Set ({@code value} non-null; an existing key only with {@code overwrite}) or remove one label. */
    record Label(ResourceKind kind, String name, String namespace, String key, String value, boolean overwrite)
            implements Command {
    }

    /** Print the client's version and the cluster's (ClusterInformation {@code default}). */
    record Version() implements Command {
    }

    /**
     * Print one resource or a list; {@code namespace} null with {@code allNamespaces} for every namespace;
     * {@code columns} the headings of {@code -o custom-columns=}, else null; {@code template} the parsed
     * {@code -o go-template=} / {@code go-template-file=}, else null.
     */
    record Get(ResourceKind kind, String name, String namespace, boolean allNamespaces, String selector,
               Output output, java.util.List<String> columns, GoTemplate template) implements Command {
    }

    /** Delete one resource by kind and name, or every resource of a file; optionally ignore missing ones. */
    record Delete(ResourceKind kind, String name, String namespace, String file, boolean skipNotExists)
            implements Command {
    }

    /** {@code ipam show [--show-blocks]}: pool (and block) usage. */
    record IpamShow(boolean showBlocks) implements Command {
    }

    /**
     * {@code ipam release --ip=IP}: free one address whoever holds it; or {@code --from-report=FILE...}: free the
     * handles every report calls leaked ({@code force}: even unlocked or from another calicoctl version).
     */
    record IpamRelease(String ip, java.util.List<String> reports, boolean force) implements Command {
    }

    /**
     * {@code ipam check [-o FILE]}: report inconsistencies between blocks, handles and affinities, and leaked
     * addresses; with a file, write Calico's JSON report there.
     */
    record IpamCheck(String output) implements Command {
    }

    /** {@code ipam configure --strictaffinity=BOOL}: set IPAMConfiguration {@code default}'s strictAffinity. */
    record IpamConfigure(boolean strictAffinity) implements Command {
    }

    /** {@code ipam split NUMBER --cidr=CIDR|--name=NAME}: replace a pool by NUMBER (a power of two) equal pools. */
    record IpamSplit(String number, String cidr, String name) implements Command {
    }

    /** {@code datastore migrate lock|unlock}: ClusterInformation {@code default}'s datastoreReady false/true. */
    record DatastoreLock(boolean lock) implements Command {
    }

    /** {@code datastore migrate export}: a locked etcd datastore's resources, cluster information and IPAM. */
    record DatastoreExport() implements Command {
    }

    /** {@code datastore migrate import -f FILE}: an export into an empty kubernetes datastore, left locked. */
    record DatastoreImport(String file) implements Command {
    }

    /** {@code convert -f FILE}: Kubernetes NetworkPolicies (networking.k8s.io/v1) as Calico v3 NetworkPolicies. */
    record Convert(String file, Output output, boolean ignoreValidation) implements Command {
    }

    /** {@code node status}: this host's BGP sessions, read from BIRD's control socket. */
    record NodeStatus() implements Command {
    }

    record Help() implements Command {
    }

    /** How {@code get} prints: Calico's {@code -o ps} (the default), {@code wide}, {@code custom-columns=}, yaml, json. */
    enum Output {
        TABLE, WIDE, CUSTOM_COLUMNS, GO_TEMPLATE, YAML, JSON
    }
}
