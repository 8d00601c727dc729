package calico.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * A Spring Boot jar laid out as plain jars, what {@code java -Djarmode=tools -jar x.jar extract} makes: the
 * application's classes ({@code BOOT-INF/classes/}) as {@code x.jar} whose manifest runs the {@code Start-Class}
 * with a {@code Class-Path} of {@code lib/}, and the nested jars ({@code BOOT-INF/lib/}) in {@code lib/}, in the
 * class path index's order. Done here, with the JDK alone: the jar mode needs spring-core, which a plain main's
 * jar (confd, the CNI daemon) does not hold. A JDK 17 class archive can hold the classes of these jars, not of
 * nested ones ({@link AppCds}).
 */
final class ExtractedJar {

    private static final String CLASSES = "BOOT-INF/classes/";
    private static final String LIB = "BOOT-INF/lib/";

    private ExtractedJar() {
    }

    /**
     * Extracts {@code bootJar} into {@code destination}.
     *
     * @return the application jar ({@code destination/<bootJar's name>})
     * @throws IOException when it cannot be read or written, or is not a Spring Boot jar (no {@code Start-Class})
     */
    static Path extract(Path bootJar, Path destination) throws IOException {
        Path app = destination.resolve(bootJar.getFileName());
        Path lib = destination.resolve("lib");
        try (JarFile boot = new JarFile(bootJar.toFile(), false)) {
            Manifest bootManifest = boot.getManifest();
            String start = bootManifest == null ? null : bootManifest.getMainAttributes().getValue("Start-Class");
            if (start == null) {
                throw new IOException(bootJar + " is not a Spring Boot jar (no Start-Class in its manifest)");
            }
            Files.createDirectories(lib);
            List<String> classPath = new ArrayList<>();
            JarEntry index = boot.getJarEntry("BOOT-INF/classpath.idx");
            if (index != null) {
                try (InputStream in = boot.getInputStream(index)) {
                    for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
                        String name = line.replaceFirst("^- \"", "").replaceFirst("\"$", "");
                        if (name.startsWith(LIB)) {
                            classPath.add(name.substring(LIB.length()));
                        }
                    }
                }
            }
            for (Enumeration<JarEntry> e = boot.entries(); e.hasMoreElements(); ) {
                JarEntry entry = e.nextElement();
                String name = entry.getName();
                if (name.startsWith(LIB) && !entry.isDirectory() && name.indexOf('/', LIB.length()) < 0) {
                    String file = name.substring(LIB.length());
                    try (InputStream in = boot.getInputStream(entry)) {
                        Files.copy(in, lib.resolve(file));
                    }
                    if (!classPath.contains(file)) {
                        classPath.add(file);
                    }
                }
            }
            Manifest manifest = new Manifest();
            Attributes main = manifest.getMainAttributes();
            main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
            main.put(Attributes.Name.MAIN_CLASS, start);
            main.put(Attributes.Name.CLASS_PATH, String.join(" ", classPath.stream().map(f -> "lib/" + f).toList()));
            try (OutputStream os = Files.newOutputStream(app); JarOutputStream out = new JarOutputStream(os, manifest)) {
                for (Enumeration<JarEntry> e = boot.entries(); e.hasMoreElements(); ) {
                    JarEntry entry = e.nextElement();
                    String name = entry.getName();
                    if (name.startsWith(CLASSES) && name.length() > CLASSES.length()) {
                        JarEntry copy = new JarEntry(name.substring(CLASSES.length()));
                        copy.setTime(entry.getTime());
                        out.putNextEntry(copy);
                        if (!entry.isDirectory()) {
                            try (InputStream in = boot.getInputStream(entry)) {
                                in.transferTo(out);
                            }
                        }
                        out.closeEntry();
                    }
                }
            }
        }
        return app;
    }
}
