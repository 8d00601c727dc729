package calico.charts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPInputStream;

/**
 * One OCI image archive (an OCI image layout in a tar, as Jib's buildTar writes it), unpacked by
 * GNU tar into a directory and read from there. {@link #verify()} checks the layout against
 * itself; {@link #unpack(Path)} applies its layers to a root file system the way a runtime does.
 */
final class ImageArchive {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Blobs already checked, by digest: the base layers are in every archive, hashed once. */
    private static final Map<String, String> DIFF_IDS = new ConcurrentHashMap<>();

    private final Path archive;
    private final Path dir;

    private ImageArchive(Path archive, Path dir) {
        this.archive = archive;
        this.dir = dir;
    }

    static ImageArchive open(Path archive, Path workDir) {
        Commands.run(List.of("tar", "-xf", archive.toString(), "-C", workDir.toString()));
        return new ImageArchive(archive, workDir);
    }

    JsonNode index() {
        return read(dir.resolve("index.json"));
    }

    /** {@return the reference the index names its one manifest by (org.opencontainers.image.ref.name)} */
    String reference() {
        return index().path("manifests").path(0).path("annotations").path("org.opencontainers.image.ref.name").asText();
    }

    JsonNode manifest() {
        return read(blob(index().path("manifests").path(0).path("digest").asText()));
    }

    /** {@return the image configuration's {@code config} object: Entrypoint, Env, User, ExposedPorts, Labels} */
    JsonNode config() {
        return read(blob(manifest().path("config").path("digest").asText())).path("config");
    }

    /**
     * Checks the layout: the oci-layout marker, one manifest in the index, every descriptor's
     * size and digest equal to its blob's, and the config's diff_ids equal to the digests of the
     * uncompressed layers, in order. Throws an AssertionError naming what differs.
     */
    void verify() {
        check(Files.isRegularFile(dir.resolve("oci-layout")), "no oci-layout file");
        JsonNode manifests = index().path("manifests");
        check(manifests.size() == 1, "the index has " + manifests.size() + " manifests, not 1");
        descriptor(manifests.path(0));
        JsonNode manifest = manifest();
        descriptor(manifest.path("config"));
        JsonNode diffIds = read(blob(manifest.path("config").path("digest").asText())).path("rootfs").path("diff_ids");
        JsonNode layers = manifest.path("layers");
        check(diffIds.size() == layers.size(), layers.size() + " layers but " + diffIds.size() + " diff_ids");
        for (int i = 0; i < layers.size(); i++) {
            JsonNode layer = layers.path(i);
            descriptor(layer);
            String digest = layer.path("digest").asText();
            String diffId = DIFF_IDS.computeIfAbsent(digest, d -> sha256(blob(d), true));
            check(diffId.equals(diffIds.path(i).asText()), "layer " + i + " (" + digest + ") uncompresses to " + diffId
                    + ", the config says " + diffIds.path(i).asText());
        }
    }

    /** Applies the layers, lowest first, onto {@code rootfs}: whiteouts delete what lower layers put there. */
    void unpack(Path rootfs) {
        for (JsonNode layer : manifest().path("layers")) {
            Path blob = blob(layer.path("digest").asText());
            List<String> names = List.of(Commands.run(List.of("tar", "-tzf", blob.toString())).split("\n"));
            for (String name : names) {
                Path entry = Path.of(name);
                String base = entry.getFileName() == null ? "" : entry.getFileName().toString();
                Path parent = entry.getParent() == null ? rootfs : rootfs.resolve(entry.getParent().toString());
                if (base.equals(".wh..wh..opq")) {
                    Commands.run(List.of("find", parent.toString(), "-mindepth", "1", "-delete"));
                } else if (base.startsWith(".wh.")) {
                    Commands.run(List.of("rm", "-rf", parent.resolve(base.substring(4)).toString()));
                }
            }
            Commands.run(List.of("tar", "-xzf", blob.toString(), "-C", rootfs.toString(), "--numeric-owner",
                    "--warning=no-unknown-keyword", "--exclude=.wh.*"));
        }
    }

    private void descriptor(JsonNode descriptor) {
        String digest = descriptor.path("digest").asText();
        Path blob = blob(digest);
        check(Files.isRegularFile(blob), "no blob for " + digest);
        try {
            check(Files.size(blob) == descriptor.path("size").asLong(), digest + " is " + Files.size(blob)
                    + " bytes, its descriptor says " + descriptor.path("size").asLong());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!DIFF_IDS.containsKey(digest)) {
            check(sha256(blob, false).equals(digest), "blob " + digest + " hashes to " + sha256(blob, false));
        }
    }

    private Path blob(String digest) {
        check(digest.startsWith("sha256:"), "not a sha256 digest: '" + digest + "'");
        return dir.resolve("blobs/sha256").resolve(digest.substring("sha256:".length()));
    }

    private void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(archive.getFileName() + ": " + what);
        }
    }

    private static JsonNode read(Path file) {
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String sha256(Path file, boolean gunzip) {
        try (InputStream raw = Files.newInputStream(file);
             InputStream in = gunzip ? new GZIPInputStream(raw, 1 << 16) : raw) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                md.update(buffer, 0, n);
            }
            return "sha256:" + HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(file.toString(), e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Processes the images test runs: their output, or an AssertionError with it. */
    static final class Commands {
        private Commands() {
        }

        record Result(int exit, String output) {
        }

        static String run(List<String> command) {
            Result r = exec(command);
            if (r.exit() != 0) {
                throw new AssertionError(String.join(" ", command) + " exited " + r.exit() + ": " + r.output());
            }
            return r.output();
        }

        static Result exec(List<String> command) {
            try {
                Process p = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).start();
                p.getOutputStream().close();
                String out = new String(p.getInputStream().readAllBytes());
                return new Result(p.waitFor(), out);
            } catch (IOException e) {
                throw new UncheckedIOException(String.join(" ", command), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }
}
