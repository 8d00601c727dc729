package calico.whisker.auth;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/** {@code Authorization: Basic ...} against the user:password lines of WHISKER_AUTH_BASIC_FILE. */
public final class BasicAuthenticator implements Authenticator {

    /** Digests of whole "user:password" lines; every one is compared, so the time does not say which user exists. */
    private final List<byte[]> digests;

    BasicAuthenticator(List<String> userPasswords) {
        this.digests = userPasswords.stream().map(Secrets::digest).toList();
    }

    static BasicAuthenticator fromFile(String file) {
        List<String> entries = new ArrayList<>();
        String[] lines = Secrets.read(file, "WHISKER_AUTH_BASIC_FILE").split("\r?\n");
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int colon = line.indexOf(':');
            if (colon <= 0 || colon == line.length() - 1) {
                throw new IllegalArgumentException("WHISKER_AUTH_BASIC_FILE: " + file + " line " + (i + 1)
                        + " is not user:password");
            }
            entries.add(line);
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("WHISKER_AUTH_BASIC_FILE: " + file + " has no user:password line");
        }
        return new BasicAuthenticator(entries);
    }

    @Override
    public String reject(String authorization) {
        String presented = Secrets.credential(authorization, "Basic");
        if (presented == null) {
            return "authentication required: send Authorization: Basic with user:password";
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(presented), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return "the Basic credentials are not base64";
        }
        boolean ok = false;
        for (byte[] d : digests) {
            ok |= Secrets.matches(d, decoded);
        }
        return ok ? null : "the user name or password is not valid";
    }

    @Override
    public String challenge() {
        return "Basic realm=\"whisker\"";
    }
}
