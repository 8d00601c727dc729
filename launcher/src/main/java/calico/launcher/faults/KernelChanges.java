package calico.launcher.faults;

import java.util.List;

/**
 * Counting kernel changes in what {@code nft monitor} and {@code ip monitor route} print: one line per
 * change ({@code add rule inet calico ...}, {@code delete element ...}, {@code Deleted 192.168.1.0/26 via ...}),
 * blank lines and comments ({@code # new generation 12 by process 345 (java)}) aside.
 */
final class KernelChanges {

    private KernelChanges() {
    }

    static boolean isChange(String line) {
        String s = line.strip();
        return !s.isEmpty() && !s.startsWith("#");
    }

    static int count(List<String> lines) {
        return (int) lines.stream().filter(KernelChanges::isChange).count();
    }
}
