package calico.libcalico.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.JMException;
import javax.management.ObjectName;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import org.springframework.context.SmartLifecycle;

/**
 * Calico's debug profile port (kube-controllers' {@code debugProfilePort}, felix's {@code debugPort}),
 * where Calico serves Go's pprof. The same paths, answered with what a JVM has:
 * <ul>
 *   <li>{@code /debug/pprof/} lists what is served;</li>
 *   <li>{@code /debug/pprof/goroutine}: every thread's stack, with the locks held and awaited (text);</li>
 *   <li>{@code /debug/pprof/heap}: the class histogram of live objects (text, after a full collection);</li>
 *   <li>{@code /debug/pprof/profile?seconds=N}: a Java Flight Recorder recording of N seconds (1–300, default
 *       30) with the JDK's {@code profile} settings, for JDK Mission Control or {@code jfr print}.</li>
 * </ul>
 * Off unless its port is set: it exposes the process's internals, so it should listen on loopback
 * (felix's {@code debugHost} default) or behind a NetworkPolicy. One request at a time, so a profile
 * holds the port for its window (Go's pprof also takes one CPU profile at a time).
 */
public final class DebugProfileServer extends SideServer implements SmartLifecycle {

    static final int DEFAULT_PROFILE_SECONDS = 30;
    static final int MAX_PROFILE_SECONDS = 300;

    private static final String TEXT = "text/plain; charset=utf-8";

    /** @param setting the port setting as errors name it, e.g. {@code KubeControllersConfiguration default spec.debugProfilePort} */
    public DebugProfileServer(String host, int port, String setting) {
        super(host, port, setting);
    }

    @Override
    void serve(HttpServer server) {
        server.createContext("/debug/pprof/", exchange -> {
            try (exchange) {
                if (!"GET".equals(exchange.getRequestMethod())) {
                    exchange.sendResponseHeaders(405, -1);
                    return;
                }
                String what = exchange.getRequestURI().getPath().substring("/debug/pprof/".length());
                switch (what) {
                    case "" -> send(exchange, 200, TEXT, utf8("""
                            goroutine  every thread's stack, with the locks held and awaited
                            heap       the class histogram of live objects
                            profile    a Java Flight Recorder recording: ?seconds=N (1-300, default 30)
                            """));
                    case "goroutine" -> send(exchange, 200, TEXT, utf8(threadDump()));
                    case "heap" -> send(exchange, 200, TEXT, utf8(classHistogram()));
                    case "profile" -> profile(exchange);
                    default -> send(exchange, 404, TEXT, utf8("no profile " + what + ": see /debug/pprof/\n"));
                }
            }
        });
    }

    private static void profile(HttpExchange exchange) throws IOException {
        int seconds;
        try {
            seconds = seconds(exchange.getRequestURI().getRawQuery());
        } catch (IllegalArgumentException e) {
            send(exchange, 400, TEXT, utf8(e.getMessage() + "\n"));
            return;
        }
        Path file = Files.createTempFile("calico-profile-", ".jfr");
        try (Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
            recording.setToDisk(true);
            recording.start();
            try {
                Thread.sleep(seconds * 1000L); // the profile is of this window
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            recording.stop();
            recording.dump(file);
            send(exchange, 200, "application/octet-stream", Files.readAllBytes(file));
        } catch (java.text.ParseException e) {
            send(exchange, 500, TEXT, utf8("the JDK's profile settings cannot be read: " + e.getMessage() + "\n"));
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** {@return the {@code seconds} query parameter}, checked. */
    static int seconds(String query) {
        if (query == null || query.isEmpty()) {
            return DEFAULT_PROFILE_SECONDS;
        }
        for (String pair : query.split("&")) {
            if (pair.startsWith("seconds=")) {
                String value = pair.substring("seconds=".length());
                int s;
                try {
                    s = Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("seconds: '" + value + "' is not a whole number");
                }
                if (s < 1 || s > MAX_PROFILE_SECONDS) {
                    throw new IllegalArgumentException("seconds: " + s + " is outside 1-" + MAX_PROFILE_SECONDS);
                }
                return s;
            }
        }
        return DEFAULT_PROFILE_SECONDS;
    }

    static String threadDump() {
        StringBuilder out = new StringBuilder();
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            out.append('"').append(t.getThreadName()).append("\" #").append(t.getThreadId())
                    .append(t.isDaemon() ? " daemon" : "").append(' ').append(t.getThreadState());
            if (t.getLockName() != null) {
                out.append(" on ").append(t.getLockName());
                if (t.getLockOwnerName() != null) {
                    out.append(" owned by \"").append(t.getLockOwnerName()).append('"');
                }
            }
            out.append('\n');
            StackTraceElement[] stack = t.getStackTrace();
            for (int i = 0; i < stack.length; i++) {
                out.append("\tat ").append(stack[i]).append('\n');
                for (MonitorInfo m : t.getLockedMonitors()) {
                    if (m.getLockedStackDepth() == i) {
                        out.append("\t- locked ").append(m).append('\n');
                    }
                }
            }
            for (LockInfo l : t.getLockedSynchronizers()) {
                out.append("\t- holds ").append(l).append('\n');
            }
            out.append('\n');
        }
        return out.toString();
    }

    static String classHistogram() {
        try {
            return (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
        } catch (JMException e) {
            return "the JVM gives no class histogram: " + e.getMessage() + "\n";
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
