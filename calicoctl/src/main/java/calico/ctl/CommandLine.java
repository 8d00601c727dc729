package calico.ctl;

import calico.api.model.ResourceKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Parses calicoctl's arguments; a malformed line is a {@link UsageException} that says what is wrong. */
final class CommandLine {

    static final String USAGE = """
            usage: calicoctl <command> [options]
              apply  -f FILE|-  [-n NAMESPACE]        create or overwrite the resources in FILE
              create -f FILE|-  [-n NAMESPACE]        create the resources in FILE
              replace -f FILE|- [-n NAMESPACE]        overwrite the resources in FILE, which must exist
              patch  KIND NAME -p PATCH [-t strategic|merge|json] [-n NAMESPACE]
              label  KIND NAME key=value [--overwrite] | label KIND NAME key --remove   [-n NAMESPACE]
              version                                 client and cluster version
              get    KIND [NAME] [-n NS | -A] [-l SELECTOR] [-o yaml|json]
              delete KIND NAME [-n NAMESPACE] | delete -f FILE|-   [--skip-not-exists]
              ipam show [--show-blocks]               IP pool (and block) usage
              ipam release --ip=IP                    release one address
              ipam check                              report IPAM inconsistencies
            KIND is a projectcalico.org/v3 kind, singular or plural, any case (e.g. tier, globalnetworkpolicies).
            The datastore comes from DATASTORE_TYPE (etcdv3) and ETCD_ENDPOINTS, ETCD_CA_CERT_FILE,
            ETCD_CERT_FILE, ETCD_KEY_FILE; or DATASTORE_TYPE=apiserver and CALICO_APISERVER_URL,
            CALICO_APISERVER_CA_FILE, CALICO_APISERVER_TOKEN_FILE.""";

    /** A command line that cannot be run. */
    static final class UsageException extends IllegalArgumentException {
        UsageException(String message) {
            super(message);
        }
    }

    private CommandLine() {
    }

    static Command parse(List<String> args) {
        if (args.isEmpty() || List.of("-h", "--help", "help").contains(args.get(0))) {
            return new Command.Help();
        }
        String verb = args.get(0);
        if (verb.equals("ipam")) {
            return ipam(args.subList(1, args.size()));
        }
        Options o = Options.parse(args.subList(1, args.size()));
        return switch (verb) {
            case "apply" -> new Command.Apply(o.requireFile(verb), o.namespace);
            case "create" -> new Command.Create(o.requireFile(verb), o.namespace);
            case "replace" -> new Command.Replace(o.requireFile(verb), o.namespace);
            case "patch" -> {
                o.expectPositionals(verb, 2, 2);
                if (o.patch == null) {
                    throw new UsageException("patch needs -p PATCH (--patch)");
                }
                yield new Command.Patch(kind(o.positionals.get(0)), o.positionals.get(1), o.namespace, o.patch,
                        o.patchType);
            }
            case "label" -> label(o);
            case "version" -> {
                o.expectPositionals(verb, 0, 0);
                yield new Command.Version();
            }
            case "get" -> {
                o.expectPositionals(verb, 1, 2);
                yield new Command.Get(kind(o.positionals.get(0)), o.positionals.size() > 1 ? o.positionals.get(1) : null,
                        o.namespace, o.allNamespaces, o.selector, o.output);
            }
            case "delete" -> {
                if (o.file != null) {
                    o.expectPositionals(verb, 0, 0);
                    yield new Command.Delete(null, null, o.namespace, o.file, o.skipNotExists);
                }
                o.expectPositionals(verb, 2, 2);
                yield new Command.Delete(kind(o.positionals.get(0)), o.positionals.get(1), o.namespace, null,
                        o.skipNotExists);
            }
            default -> throw new UsageException("unknown command \"" + verb + "\"");
        };
    }

    /** {@code ipam show|release|check} and their flags ({@code --flag=value} or {@code --flag value}). */
    private static Command ipam(List<String> args) {
        if (args.isEmpty()) {
            throw new UsageException("ipam needs a subcommand: show, release or check");
        }
        String sub = args.get(0);
        boolean showBlocks = false;
        String ip = null;
        for (int i = 1; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--show-blocks") && sub.equals("show")) {
                showBlocks = true;
            } else if (a.startsWith("--ip=") && sub.equals("release")) {
                ip = a.substring("--ip=".length());
            } else if (a.equals("--ip") && sub.equals("release")) {
                ip = Options.value(args, ++i, a);
            } else {
                throw new UsageException("ipam " + sub + ": unknown option \"" + a + "\"");
            }
        }
        return switch (sub) {
            case "show" -> new Command.IpamShow(showBlocks);
            case "check" -> new Command.IpamCheck();
            case "release" -> {
                if (ip == null || ip.isEmpty()) {
                    throw new UsageException("ipam release needs --ip=IP");
                }
                yield new Command.IpamRelease(ip);
            }
            default -> throw new UsageException("unknown ipam subcommand \"" + sub + "\" (show, release, check)");
        };
    }

    /** {@code label KIND NAME key=value [--overwrite]} or {@code label KIND NAME key --remove}. */
    private static Command label(Options o) {
        o.expectPositionals("label", 3, 3);
        String label = o.positionals.get(2);
        int eq = label.indexOf('=');
        if (o.remove) {
            if (eq >= 0 || o.overwrite) {
                throw new UsageException("label --remove takes a key alone, without =value or --overwrite");
            }
            return new Command.Label(kind(o.positionals.get(0)), o.positionals.get(1), o.namespace, label, null, false);
        }
        if (eq <= 0) {
            throw new UsageException("label: \"" + label + "\" is not key=value (or give a key with --remove)");
        }
        return new Command.Label(kind(o.positionals.get(0)), o.positionals.get(1), o.namespace, label.substring(0, eq),
                label.substring(eq + 1), o.overwrite);
    }

    /** {@return the kind named by its singular or plural name, in any case}. */
    static ResourceKind kind(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        Optional<ResourceKind> k = Arrays.stream(ResourceKind.values())
                .filter(rk -> rk.kind().toLowerCase(Locale.ROOT).equals(n) || rk.plural().equals(n))
                .findFirst();
        return k.orElseThrow(() -> new UsageException("unknown resource kind \"" + name + "\""));
    }

    /** The flags every command may take; each command checks the ones it needs. */
    private static final class Options {
        String file;
        String namespace;
        String selector;
        boolean allNamespaces;
        boolean skipNotExists;
        boolean overwrite;
        boolean remove;
        String patch;
        ResourcePatch.Type patchType = ResourcePatch.Type.STRATEGIC;
        Command.Output output = Command.Output.TABLE;
        final List<String> positionals = new ArrayList<>();

        static Options parse(List<String> args) {
            Options o = new Options();
            List<String> split = new ArrayList<>();
            for (String a : args) {
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 2) { // --flag=value, as calicoctl's docopt takes it
                    split.add(a.substring(0, eq));
                    split.add(a.substring(eq + 1));
                } else {
                    split.add(a);
                }
            }
            args = split;
            for (int i = 0; i < args.size(); i++) {
                String a = args.get(i);
                switch (a) {
                    case "-p", "--patch" -> o.patch = value(args, ++i, a);
                    case "-t", "--type" -> o.patchType = patchType(value(args, ++i, a));
                    case "--overwrite" -> o.overwrite = true;
                    case "--remove" -> o.remove = true;
                    case "-f", "--filename" -> o.file = value(args, ++i, a);
                    case "-n", "--namespace" -> o.namespace = value(args, ++i, a);
                    case "-l", "--selector" -> o.selector = value(args, ++i, a);
                    case "-A", "--all-namespaces" -> o.allNamespaces = true;
                    case "--skip-not-exists" -> o.skipNotExists = true;
                    case "-o", "--output" -> o.output = output(value(args, ++i, a));
                    default -> {
                        if (a.startsWith("-") && !a.equals("-")) {
                            throw new UsageException("unknown option \"" + a + "\"");
                        }
                        o.positionals.add(a);
                    }
                }
            }
            if (o.allNamespaces && o.namespace != null) {
                throw new UsageException("-A and -n cannot be used together");
            }
            return o;
        }

        String requireFile(String verb) {
            expectPositionals(verb, 0, 0);
            if (file == null) {
                throw new UsageException(verb + " needs -f FILE (or -f - for standard input)");
            }
            return file;
        }

        void expectPositionals(String verb, int min, int max) {
            if (positionals.size() < min || positionals.size() > max) {
                throw new UsageException(verb + ": expected " + (min == max ? min : min + " to " + max)
                        + " argument(s), got " + positionals.size() + " " + positionals);
            }
        }

        private static String value(List<String> args, int i, String flag) {
            if (i >= args.size()) {
                throw new UsageException("option " + flag + " needs a value");
            }
            return args.get(i);
        }

        private static ResourcePatch.Type patchType(String v) {
            return switch (v) {
                case "strategic" -> ResourcePatch.Type.STRATEGIC;
                case "merge" -> ResourcePatch.Type.MERGE;
                case "json" -> ResourcePatch.Type.JSON;
                default -> throw new UsageException("--type: \"" + v + "\" is not one of strategic, merge, json");
            };
        }

        private static Command.Output output(String v) {
            return switch (v) {
                case "yaml" -> Command.Output.YAML;
                case "json" -> Command.Output.JSON;
                case "table", "wide" -> Command.Output.TABLE;
                default -> throw new UsageException("-o: \"" + v + "\" is not one of yaml, json, table");
            };
        }
    }
}
