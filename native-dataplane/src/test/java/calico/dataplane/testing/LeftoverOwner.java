package calico.dataplane.testing;

import java.io.IOException;

/**
 * A test JVM in miniature, for {@link LeftoversSweepTest}: makes a namespace, a mounted private bpffs and a
 * namespace under an owned name with a suffix, starts a process in the first (a daemon, as BIRD or kubelet,
 * whose child runs in a namespace of its own, as a container's processes do), prints their names
 * ({@code netns NAME}, {@code bpffs PATH}, {@code suffixed NAME}, {@code processes DAEMON CHILD}), then waits until stdin
 * closes (or it is killed).
 */
public final class LeftoverOwner {

    private LeftoverOwner() {
    }

    public static void main(String[] args) throws IOException {
        NetNs ns = NetNs.create("calico-sweep");
        PrivateBpfFs fs = PrivateBpfFs.mount();
        // A namespace made by hand under an owned name with a suffix, as confd's lab and the launcher's tests do.
        String suffixed = NetNs.newName("calico-sweep") + "-node-1";
        run("ip", "netns", "add", suffixed);
        // The child says its pid once it is in its own namespace.
        Process daemon = new ProcessBuilder("ip", "netns", "exec", ns.name(), "sh", "-c",
                "unshare --net sh -c 'echo $$; exec sleep infinity' & wait")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String child = new java.io.BufferedReader(new java.io.InputStreamReader(daemon.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8)).readLine();
        System.out.println("netns " + ns.name());
        System.out.println("bpffs " + fs.path());
        System.out.println("suffixed " + suffixed);
        System.out.println("processes " + daemon.pid() + " " + child);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
        daemon.descendants().forEach(ProcessHandle::destroyForcibly);
        daemon.destroyForcibly();
        run("ip", "netns", "delete", suffixed);
        fs.close();
        ns.close();
    }

    private static void run(String... command) throws IOException {
        try {
            if (new ProcessBuilder(command).inheritIO().start().waitFor() != 0) {
                throw new IOException(String.join(" ", command) + " failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
