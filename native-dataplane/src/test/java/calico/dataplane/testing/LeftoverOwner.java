package calico.dataplane.testing;

import java.io.IOException;

/**
 * A test JVM in miniature, for {@link LeftoversSweepTest}: makes a namespace and a mounted private bpffs, prints
 * their names ({@code netns NAME}, {@code bpffs PATH}), then waits until stdin closes (or it is killed).
 */
public final class LeftoverOwner {

    private LeftoverOwner() {
    }

    public static void main(String[] args) throws IOException {
        NetNs ns = NetNs.create("calico-sweep");
        PrivateBpfFs fs = PrivateBpfFs.mount();
        System.out.println("netns " + ns.name());
        System.out.println("bpffs " + fs.path());
        System.out.flush();
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
        fs.close();
        ns.close();
    }
}
