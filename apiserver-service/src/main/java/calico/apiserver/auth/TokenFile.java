package calico.apiserver.auth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * kube-apiserver's {@code --token-auth-file}: CSV lines {@code token,user,uid,"group1,group2"}
 * (groups optional). Blank lines and lines starting with {@code #} are skipped; a malformed line
 * fails start-up with its line number.
 */
public final class TokenFile implements TokenAuthenticator {

    private final Map<String, User> byToken;

    private TokenFile(Map<String, User> byToken) {
        this.byToken = Map.copyOf(byToken);
    }

    public static TokenFile empty() {
        return new TokenFile(Map.of());
    }

    public static TokenFile read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("--token-auth-file " + file + ": " + e.getMessage(), e);
        }
        Map<String, User> out = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            List<String> f = csv(line);
            if (f.size() < 3 || f.get(0).isEmpty() || f.get(1).isEmpty()) {
                throw new IllegalArgumentException("--token-auth-file " + file + " line " + (i + 1)
                        + ": expected token,user,uid[,\"group1,group2\"]");
            }
            List<String> groups = new ArrayList<>();
            if (f.size() > 3) {
                for (String g : f.get(3).split(",")) {
                    if (!g.isBlank()) {
                        groups.add(g.trim());
                    }
                }
            }
            out.put(f.get(0), new User(f.get(1), f.get(2), groups));
        }
        return new TokenFile(out);
    }

    @Override
    public Optional<User> user(String token) {
        return Optional.ofNullable(byToken.get(token));
    }

    private static List<String> csv(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '"') {
                if (quoted && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else {
                    quoted = !quoted;
                }
            } else if (c == ',' && !quoted) {
                out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString().trim());
        return out;
    }
}
