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

    /** Print one resource or a list; {@code namespace} null with {@code allNamespaces} for every namespace. */
    record Get(ResourceKind kind, String name, String namespace, boolean allNamespaces, String selector,
               Output output) implements Command {
    }

    /** Delete one resource by kind and name, or every resource of a file; optionally ignore missing ones. */
    record Delete(ResourceKind kind, String name, String namespace, String file, boolean skipNotExists)
            implements Command {
    }

    /** {@code ipam show [--show-blocks]}: pool (and block) usage. */
    record IpamShow(boolean showBlocks) implements Command {
    }

    /** {@code ipam release --ip=IP}: free one address whoever holds it. */
    record IpamRelease(String ip) implements Command {
    }

    /** {@code ipam check}: report inconsistencies between blocks, handles and affinities. */
    record IpamCheck() implements Command {
    }

    record Help() implements Command {
    }

    /** How {@code get} prints. */
    enum Output {
        TABLE, YAML, JSON
    }
}
