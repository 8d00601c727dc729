package calico.apiserver.auth;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/** Certificates in PEM: CA bundles from files (flags) or ConfigMap keys. */
public final class Pem {

    private Pem() {
    }

    /** {@return the certificates of the PEM file {@code flag} names}; a flag without a file is none. */
    public static List<X509Certificate> read(String flag, String file) {
        if (file == null || file.isBlank()) {
            return List.of();
        }
        try {
            return certificates(flag + " " + file, Files.readString(Path.of(file)));
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + " " + file + ": " + e.getMessage(), e);
        }
    }

    /** {@return every certificate in {@code pem}}; {@code source} names it in errors. At least one is required. */
    static List<X509Certificate> certificates(String source, String pem) {
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (var c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(source + ": no certificate in PEM data");
            }
            return List.copyOf(out);
        } catch (CertificateException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
        }
    }
}
