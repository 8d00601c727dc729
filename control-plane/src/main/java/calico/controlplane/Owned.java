package calico.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Names of what a test JVM makes outside itself (network namespaces, private bpffs mounts, the data
 * directories of its etcd and control plane), carrying the JVM's pid: {@code <prefix>-p<pid>-<8 hex>},
 * or that followed by {@code -<suffix>} (several namespaces under one owned name: confd's BGP lab,
 * the launcher's {@code <prefix>node-<i>}). A JVM killed before its shutdown hooks ran (SIGKILL) leaves
 * them behind; the next fixture that makes one recognises them by name and removes those whose owner
 * is gone. Only names of exactly this form are ever swept, and never while their owner runs.
 */
public final class Owned {

    private static final Pattern NAME = Pattern.compile("^[A-Za-z0-9_.-]+?-p(\\d{1,10})-[0-9a-f]{8}(-[A-Za-z0-9_.-]+)?$");

    private Owned() {
    }

    /** {@return a new name owned by this JVM} */
    public static String name(String prefix) {
        byte[] b = new byte[4];
        ThreadLocalRandom.current().nextBytes(b);
        return prefix + "-p" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(b);
    }

    /** {@return whether {@code name} is an owned name whose owner process no longer runs} */
    public static boolean ownerGone(String name) {
        Matcher m = NAME.matcher(name);
        return m.matches() && gone(m); // not ours: never touched
    }

    private static boolean gone(Matcher owned) {
        return ProcessHandle.of(Long.parseLong(owned.group(1))).map(p -> !p.isAlive()).orElse(true);
    }

    /**
     * {@return a new empty directory in {@code parent} named {@link #name(String) name(prefix)}}, after
     * deleting, with all they hold, the directories of this prefix whose owner is gone.
     */
    public static Path directory(Path parent, String prefix) {
        for (Path left : leftovers(parent, prefix)) {
            try {
                deleteTree(left);
                System.err.println("Owned: removed " + left + ", left by a JVM that is gone");
            } catch (UncheckedIOException e) {
                System.err.println("Owned: cannot remove " + left + ": " + e.getMessage());
            }
        }
        Path dir = parent.resolve(name(prefix));
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    /** {@return the entries of {@code parent} owned under exactly {@code prefix} whose owner is gone} */
    public static List<Path> leftovers(Path parent, String prefix) {
        if (!Files.isDirectory(parent)) {
            return List.of();
        }
        List<Path> gone = new ArrayList<>();
        try (Stream<Path> s = Files.list(parent)) {
            s.filter(p -> {
                Matcher m = NAME.matcher(p.getFileName().toString());
                // The shortest prefix the name allows: "kube-test" does not claim "kube-test-pki-p1-…".
                return m.matches() && m.start(1) == prefix.length() + 2 && m.group().startsWith(prefix) && gone(m);
            }).forEach(gone::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + parent, e);
        }
        return gone;
    }

    /** Deletes {@code root} and what it holds, symbolic links as links; nothing when it is null or gone. */
    public static void deleteTree(Path root) {
        if (root == null || !Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    if (e != null) {
                        throw e;
                    }
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
