package calico.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The nodes of {@code ./calico up}: {@link #startup} makes the topology and runs calico-node's
 * start-up once per node (before typha and the cluster's API server read the datastore);
 * {@link #up} starts each node's services and returns once all are ready; {@link #down} stops
 * them and deletes the topology; {@link #status} reports each. Every step is idempotent.
 */
final class Nodes {

    private static final Duration POLL = ReadinessWait.POLL;

    private final Settings settings;
    private final Map<String, String> environment;
    private final PrintStream out;

    /** @param environment the launcher's environment (the datastore's variables), for start-up and the CNI config */
    Nodes(Settings settings, Map<String, String> environment, PrintStream out) {
        this.settings = settings;
        this.environment = Map.copyOf(environment);
        this.out = out;
    }

    private List<NodeServices> all() {
        return settings.topology().nodes().stream().map(n -> new NodeServices(settings, n)).toList();
    }

    /** Creates what is missing of the topology, then runs calico-node's start-up for each node. */
    void startup() {
        List<String> made = settings.topology().create();
        if (!made.isEmpty()) {
            say("created network namespaces " + String.join(", ", made));
        }
        Path log = settings.runDir().resolve("logs").resolve("node-startup.log");
        for (NodeServices n : all()) {
            say("calico-node start-up for " + n.node().name() + " (" + n.node().namespace() + ")");
            Map<String, String> env = new LinkedHashMap<>(n.startupEnvironment());
            env.putAll(settings.jvmFlags().environment());
            List<String> cmd = settings.jvmFlags().javaJar("node-startup", settings.jar("node-startup", "node-startup-exec.jar"), env);
            try {
                Files.createDirectories(log.getParent());
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
                pb.environment().putAll(env);
                Process p = pb.start();
                p.getOutputStream().close();
                if (p.waitFor() != 0) {
                    throw new IllegalStateException(lastLine(log, "calico-node start-up failed") + " (log: " + log + ")");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run " + cmd, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** Starts every node's services that do not run yet and waits until all are ready. */
    void up() {
        List<NodeServices> nodes = all();
        for (NodeServices n : nodes) {
            if (!Topology.exists(n.node().namespace())) {
                throw new IllegalStateException("network namespace " + n.node().namespace() + " is missing: run startup first");
            }
            n.writeCniConf(environment);
        }
        List<NodeServices.Service> waiting = new ArrayList<>();
        for (NodeServices n : nodes) {
            for (NodeServices.Service s : n.services()) {
                if (s.process().pid().isPresent()) {
                    say(s.name() + " already running");
                } else {
                    waiting.add(s);
                }
            }
        }
        startAndAwait(waiting, ReadinessWait.Budget.DEFAULT);
    }

    /**
     * Starts each service once it may start and waits until every one is ready. Each started process
     * is waited for as {@code ./calico} waits for typha ({@link ReadinessWait}): by its own CPU time,
     * so a JVM starved on a loaded machine is not given up on by the clock, and at once when it exits.
     * A service that may never start (BIRD without confd's configuration) ends the wait at the budget's clock cap.
     */
    void startAndAwait(List<NodeServices.Service> services, ReadinessWait.Budget budget) {
        List<NodeServices.Service> notStarted = new ArrayList<>(services);
        Map<NodeServices.Service, ReadinessWait.Tracker> starting = new LinkedHashMap<>();
        long deadline = System.nanoTime() + budget.wall().toNanos();
        while (!notStarted.isEmpty() || !starting.isEmpty()) {
            for (NodeServices.Service s : List.copyOf(notStarted)) {
                if (s.mayStart().getAsBoolean()) {
                    say("starting " + s.name());
                    s.process().start();
                    long pid = s.process().pid().orElse(0L);
                    if (pid <= 0) {
                        throw exited(s);
                    }
                    starting.put(s, new ReadinessWait.Tracker(ReadinessWait.Watched.pid(pid), s.ready(), budget));
                    notStarted.remove(s);
                }
            }
            for (Map.Entry<NodeServices.Service, ReadinessWait.Tracker> e : List.copyOf(starting.entrySet())) {
                NodeServices.Service s = e.getKey();
                ReadinessWait.Outcome outcome = e.getValue().poll().orElse(null);
                if (outcome instanceof ReadinessWait.Ready) {
                    say(s.name() + " " + outcome.describe());
                    starting.remove(s);
                } else if (outcome instanceof ReadinessWait.Exited) {
                    throw exited(s);
                } else if (outcome instanceof ReadinessWait.OutOfBudget) {
                    throw new IllegalStateException(s.name() + " " + outcome.describe() + " (log: " + s.process().log() + "):\n"
                            + s.process().logTail(20));
                }
            }
            if (notStarted.isEmpty() && starting.isEmpty()) {
                break;
            }
            if (!notStarted.isEmpty() && System.nanoTime() > deadline) {
                throw new IllegalStateException(notStarted.get(0).name() + " could not start within " + budget.wall().toSeconds()
                        + " s: what it waits for is not there");
            }
            pause();
        }
    }

    private static IllegalStateException exited(NodeServices.Service s) {
        return new IllegalStateException(s.name() + " exited during start-up (log: " + s.process().log() + "):\n"
                + s.process().logTail(20));
    }

    /** Stops every node's services (of every recorded node, whatever count it was made with) and deletes the topology. */
    void down() {
        Topology topology = settings.topology();
        // Every recorded node, and every service (confd and BIRD too), whatever the `up` that made them was told.
        Settings widest = settings.withEveryService(Math.max(topology.highestRecordedNode(), settings.nodes()));
        // Every service stops at once (each JVM takes seconds to exit): one thread per service.
        List<Thread> stopping = new ArrayList<>();
        for (Node node : widest.topology().nodes()) {
            List<NodeServices.Service> services = new ArrayList<>(new NodeServices(widest, node).services());
            Collections.reverse(services);
            for (NodeServices.Service s : services) {
                s.process().pid().ifPresent(pid -> say("stopping " + s.name() + " (pid " + pid + ")"));
                Thread t = new Thread(() -> s.process().stop(Duration.ofSeconds(10)), "stop-" + s.name());
                t.start();
                stopping.add(t);
            }
        }
        for (Thread t : stopping) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while stopping the nodes' services", e);
            }
        }
        List<String> deleted = topology.delete();
        if (!deleted.isEmpty()) {
            say("deleted network namespaces " + String.join(", ", deleted));
        }
    }

    /** Prints one line per node service and per node namespace; {@return true when all is well} */
    boolean status() {
        boolean ok = true;
        for (NodeServices n : all()) {
            for (NodeServices.Service s : n.services()) {
                var pid = s.process().pid();
                if (pid.isEmpty()) {
                    out.printf("%-16s stopped%n", s.name());
                    ok = false;
                    continue;
                }
                boolean ready = s.ready().getAsBoolean();
                ok &= ready;
                out.printf("%-16s running (pid %d), %s%n", s.name(), pid.get(), ready ? "ready" : "unhealthy");
            }
            String ns = n.node().namespace();
            if (Topology.exists(ns)) {
                long veths = Command.run("ip", "-n", ns, "-o", "link", "show").lines().filter(l -> l.contains(": cali")).count();
                out.printf("%-16s network namespace %s, %s, %d cali* veths%n", n.node().name(), ns, n.node().cidr(), veths);
            } else {
                out.printf("%-16s network namespace %s missing%n", n.node().name(), ns);
                ok = false;
            }
        }
        return ok;
    }

    void info() {
        all().forEach(n -> n.info(out));
    }

    private void say(String line) {
        out.println("calico: " + line);
        out.flush();
    }

    private static void pause() {
        try {
            Thread.sleep(POLL.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static String lastLine(Path log, String containing) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            for (int i = lines.size() - 1; i >= 0; i--) {
                if (lines.get(i).contains(containing)) {
                    return lines.get(i);
                }
            }
            return containing + " (no reason in the log)";
        } catch (IOException e) {
            return containing;
        }
    }
}
