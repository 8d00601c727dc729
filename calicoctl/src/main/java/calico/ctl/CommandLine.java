package calico.ctl;

import calico.api.model.ResourceKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
              get    KIND [NAME] [-n NS | -A] [-l SELECTOR] [-o ps|wide|custom-columns=H,H|go-template=T|go-template-file=F|yaml|json]
              delete KIND NAME [-n NAMESPACE] | delete -f FILE|-   [--skip-not-exists]
              ipam show [--show-blocks]               IP pool (and block) usage
              ipam release --ip=IP | --from-report=FILE... [--force]   release one address, or what reports call leaked
              ipam check [-o FILE]                    report IPAM inconsistencies and leaks (FILE: the JSON report)
              ipam configure --strictaffinity=true|false
              ipam split NUMBER --cidr=CIDR | --name=POOL   split a pool (the datastore locked)
              datastore migrate lock | unlock | export | import -f FILE
              convert -f FILE|- [-o yaml|json] [--ignore-validation]   Kubernetes NetworkPolicies as Calico's
              node status                             this host's BGP sessions (BIRD's socket: CALICO_BIRD_SOCKET,
                                                      default /var/run/calico/bird.ctl)
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
        if (verb.equals("datastore")) {
            return datastore(args.subList(1, args.size()));
        }
        if (verb.equals("node")) {
            if (args.size() != 2 || !args.get(1).equals("status")) {
                throw new UsageException("node takes one subcommand: status (no options)");
            }
            return new Command.NodeStatus();
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
            case "convert" -> {
                String file = o.requireFile(verb);
                if (o.output != Command.Output.YAML && o.output != Command.Output.JSON && o.output != Command.Output.TABLE) {
                    throw new UsageException("unrecognized output format for convert (yaml or json)");
                }
                yield new Command.Convert(file, o.output == Command.Output.JSON ? Command.Output.JSON
                        : Command.Output.YAML, o.ignoreValidation);
            }
            case "version" -> {
                o.expectPositionals(verb, 0, 0);
                yield new Command.Version();
            }
            case "get" -> {
                o.expectPositionals(verb, 1, 2);
                yield new Command.Get(kind(o.positionals.get(0)), o.positionals.size() > 1 ? o.positionals.get(1) : null,
                        o.namespace, o.allNamespaces, o.selector, o.output, o.columns, o.template);
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

    /** {@code ipam show|release|check|configure|split} and their flags ({@code --flag=value} or {@code --flag value}). */
    private static Command ipam(List<String> args) {
        if (args.isEmpty()) {
            throw new UsageException("ipam needs a subcommand: show, release, check, configure or split");
        }
        String sub = args.get(0);
        boolean showBlocks = false;
        String ip = null;
        String strictAffinity = null;
        String output = null;
        boolean force = false;
        List<String> reports = new ArrayList<>();
        String cidr = null;
        String name = null;
        List<String> positionals = new ArrayList<>();
        for (int i = 1; i < args.size(); i++) {
            String a = args.get(i);
            String flag = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            boolean inline = a.contains("=");
            switch (sub + " " + flag) {
                case "show --show-blocks" -> showBlocks = true;
                case "release --ip" -> ip = inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a);
                case "release --from-report" ->
                        reports.add(inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a));
                case "release --force" -> force = true;
                case "check -o", "check --output" ->
                        output = inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a);
                case "configure --strictaffinity" ->
                        strictAffinity = inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a);
                case "split --cidr" -> cidr = inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a);
                case "split --name" -> name = inline ? a.substring(a.indexOf('=') + 1) : Options.value(args, ++i, a);
                default -> {
                    if (a.startsWith("-") || !sub.equals("split")) {
                        throw new UsageException("ipam " + sub + ": unknown option \"" + a + "\"");
                    }
                    positionals.add(a);
                }
            }
        }
        return switch (sub) {
            case "show" -> new Command.IpamShow(showBlocks);
            case "check" -> new Command.IpamCheck(output);
            case "release" -> {
                if ((ip == null || ip.isEmpty()) == reports.isEmpty()) {
                    throw new UsageException("ipam release needs --ip=IP or --from-report=FILE (not both)");
                }
                yield new Command.IpamRelease(ip, List.copyOf(reports), force);
            }
            case "configure" -> {
                if (strictAffinity == null) {
                    throw new UsageException("ipam configure needs --strictaffinity=<true/false>");
                }
                yield new Command.IpamConfigure(switch (strictAffinity) {
                    case "1", "t", "T", "TRUE", "true", "True" -> true;
                    case "0", "f", "F", "FALSE", "false", "False" -> false;
                    default -> throw new UsageException("Invalid value. Use true or false to set strictaffinity");
                });
            }
            case "split" -> {
                if (positionals.size() != 1) {
                    throw new UsageException("ipam split needs one NUMBER (the pools to split into), got " + positionals);
                }
                if (cidr == null && name == null) {
                    throw new UsageException("No name or CIDR provided. Provide a name or CIDR to denote the IP pool to split.");
                }
                yield new Command.IpamSplit(positionals.get(0), cidr, name);
            }
            default -> throw new UsageException("unknown ipam subcommand \"" + sub
                    + "\" (show, release, check, configure, split)");
        };
    }

    /** {@code datastore migrate lock|unlock|export|import -f FILE}. */
    private static Command datastore(List<String> args) {
        if (args.size() < 2 || !args.get(0).equals("migrate")) {
            throw new UsageException("datastore needs: migrate lock|unlock|export|import -f FILE");
        }
        String sub = args.get(1);
        Options o = Options.parse(args.subList(2, args.size()));
        return switch (sub) {
            case "lock", "unlock", "export" -> {
                o.expectPositionals("datastore migrate " + sub, 0, 0);
                if (o.file != null) {
                    throw new UsageException("datastore migrate " + sub + " takes no -f (export writes to standard output)");
                }
                yield sub.equals("export") ? new Command.DatastoreExport() : new Command.DatastoreLock(sub.equals("lock"));
            }
            case "import" -> new Command.DatastoreImport(o.requireFile("datastore migrate import"));
            default -> throw new UsageException("unknown datastore migrate subcommand \"" + sub
                    + "\" (lock, unlock, export, import)");
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

    /** Calico's short names for kinds, beside their singular and plural names. */
    private static final Map<String, ResourceKind> ALIASES = Map.ofEntries(
            Map.entry("bgpconfig", ResourceKind.BGP_CONFIGURATION),
            Map.entry("bgpconfigs", ResourceKind.BGP_CONFIGURATION),
            Map.entry("bgpp", ResourceKind.BGP_PEER), Map.entry("bgpps", ResourceKind.BGP_PEER),
            Map.entry("bp", ResourceKind.BGP_PEER), Map.entry("bps", ResourceKind.BGP_PEER),
            Map.entry("bgpf", ResourceKind.BGP_FILTER), Map.entry("bgpfs", ResourceKind.BGP_FILTER),
            Map.entry("bf", ResourceKind.BGP_FILTER), Map.entry("bfs", ResourceKind.BGP_FILTER),
            Map.entry("nodestatus", ResourceKind.CALICO_NODE_STATUS),
            Map.entry("nodestatuses", ResourceKind.CALICO_NODE_STATUS),
            Map.entry("clusterinfo", ResourceKind.CLUSTER_INFORMATION),
            Map.entry("clusterinfos", ResourceKind.CLUSTER_INFORMATION),
            Map.entry("felixconfig", ResourceKind.FELIX_CONFIGURATION),
            Map.entry("felixconfigs", ResourceKind.FELIX_CONFIGURATION),
            Map.entry("gnp", ResourceKind.GLOBAL_NETWORK_POLICY),
            Map.entry("gnps", ResourceKind.GLOBAL_NETWORK_POLICY),
            Map.entry("gnetsets", ResourceKind.GLOBAL_NETWORK_SET),
            Map.entry("hep", ResourceKind.HOST_ENDPOINT), Map.entry("heps", ResourceKind.HOST_ENDPOINT),
            Map.entry("ipamconfig", ResourceKind.IPAM_CONFIGURATION),
            Map.entry("ipamconfiguration", ResourceKind.IPAM_CONFIGURATION),
            Map.entry("ipamconfigurations", ResourceKind.IPAM_CONFIGURATION),
            Map.entry("ipp", ResourceKind.IP_POOL), Map.entry("ipps", ResourceKind.IP_POOL),
            Map.entry("pool", ResourceKind.IP_POOL), Map.entry("pools", ResourceKind.IP_POOL),
            Map.entry("reservation", ResourceKind.IP_RESERVATION),
            Map.entry("reservations", ResourceKind.IP_RESERVATION),
            Map.entry("kubecontrollersconfig", ResourceKind.KUBE_CONTROLLERS_CONFIGURATION),
            Map.entry("kubecontrollersconfigs", ResourceKind.KUBE_CONTROLLERS_CONFIGURATION),
            Map.entry("policy", ResourceKind.NETWORK_POLICY), Map.entry("policies", ResourceKind.NETWORK_POLICY),
            Map.entry("np", ResourceKind.NETWORK_POLICY), Map.entry("pol", ResourceKind.NETWORK_POLICY),
            Map.entry("pols", ResourceKind.NETWORK_POLICY),
            Map.entry("netsets", ResourceKind.NETWORK_SET),
            Map.entry("no", ResourceKind.NODE), Map.entry("nos", ResourceKind.NODE),
            Map.entry("pro", ResourceKind.PROFILE), Map.entry("pros", ResourceKind.PROFILE),
            Map.entry("sgnp", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY),
            Map.entry("sgnps", ResourceKind.STAGED_GLOBAL_NETWORK_POLICY),
            Map.entry("sknp", ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY),
            Map.entry("skpol", ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY),
            Map.entry("skpols", ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY),
            Map.entry("stagedkubernetespolicy", ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY),
            Map.entry("stagedkubernetespolicies", ResourceKind.STAGED_KUBERNETES_NETWORK_POLICY),
            Map.entry("snp", ResourceKind.STAGED_NETWORK_POLICY),
            Map.entry("spol", ResourceKind.STAGED_NETWORK_POLICY),
            Map.entry("spols", ResourceKind.STAGED_NETWORK_POLICY),
            Map.entry("stagedpolicy", ResourceKind.STAGED_NETWORK_POLICY),
            Map.entry("stagedpolicies", ResourceKind.STAGED_NETWORK_POLICY),
            Map.entry("wep", ResourceKind.WORKLOAD_ENDPOINT), Map.entry("weps", ResourceKind.WORKLOAD_ENDPOINT));

    /** {@return the kind named by its singular or plural name or one of Calico's short names, in any case}. */
    static ResourceKind kind(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        Optional<ResourceKind> k = Arrays.stream(ResourceKind.values())
                .filter(rk -> rk.kind().toLowerCase(Locale.ROOT).equals(n) || rk.plural().equals(n))
                .findFirst().or(() -> Optional.ofNullable(ALIASES.get(n)));
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
        boolean ignoreValidation;
        String patch;
        ResourcePatch.Type patchType = ResourcePatch.Type.STRATEGIC;
        Command.Output output = Command.Output.TABLE;
        List<String> columns;
        GoTemplate template;
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
                    case "--ignore-validation" -> o.ignoreValidation = true;
                    case "-f", "--filename" -> o.file = value(args, ++i, a);
                    case "-n", "--namespace" -> o.namespace = value(args, ++i, a);
                    case "-l", "--selector" -> o.selector = value(args, ++i, a);
                    case "-A", "--all-namespaces" -> o.allNamespaces = true;
                    case "--skip-not-exists" -> o.skipNotExists = true;
                    case "-o", "--output" -> o.output(value(args, ++i, a));
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

        static String value(List<String> args, int i, String flag) {
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

        /**
         * Calico's {@code -o}: ps (default), wide, custom-columns=A,B (headings as given), go-template=T,
         * go-template-file=FILE, yaml/yml, json.
         */
        private void output(String v) {
            if (v.startsWith("go-template=") || v.startsWith("go-template-file=")) {
                boolean file = v.startsWith("go-template-file=");
                String arg = v.substring(v.indexOf('=') + 1);
                String text = arg;
                if (file) {
                    try {
                        text = java.nio.file.Files.readString(java.nio.file.Path.of(arg));
                    } catch (java.io.IOException | java.io.UncheckedIOException e) {
                        throw new UsageException("-o go-template-file: cannot read " + arg + ": " + e.getMessage());
                    }
                }
                try {
                    template = GoTemplate.parse(text);
                } catch (IllegalArgumentException e) {
                    throw new UsageException("-o " + (file ? "go-template-file=" + arg : "go-template") + ": "
                            + e.getMessage());
                }
                output = Command.Output.GO_TEMPLATE;
                return;
            }
            if (v.startsWith("custom-columns")) {
                String list = v.startsWith("custom-columns=") ? v.substring("custom-columns=".length()) : "";
                if (list.isEmpty()) {
                    throw new UsageException("need to specify at least one column");
                }
                output = Command.Output.CUSTOM_COLUMNS;
                columns = List.of(list.split(","));
                return;
            }
            output = switch (v) {
                case "yaml", "yml" -> Command.Output.YAML;
                case "json" -> Command.Output.JSON;
                case "ps" -> Command.Output.TABLE;
                case "wide" -> Command.Output.WIDE;
                default -> throw new UsageException("unrecognized output format '" + v + "'");
            };
        }
    }
}
