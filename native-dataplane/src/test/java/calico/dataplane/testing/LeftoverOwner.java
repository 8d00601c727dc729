package calico.dataplane.testing;

import java.io.IOException;

/**
 * A test JVM in miniature, for {@link LeftoversSweepTest}: makes a namespace, a mounted private bpffs and a
 * namespace under an owned name with a suffix, prints their names ({@code netns NAME}, {@code bpffs PATH},
 * {@code suffixed NAME}), then waits until stdin closes (or it is killed).
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
        System.out.println("netns " + ns.name());
        System.out.println("bpffs " + fs.path());
        System.out.println("suffixed " + suffixed);
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
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
