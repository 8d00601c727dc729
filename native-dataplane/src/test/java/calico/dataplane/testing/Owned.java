package calico.dataplane.testing;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names of what a test JVM makes outside itself (network namespaces, private bpffs mounts), carrying the
 * JVM's pid: {@code <prefix>-p<pid>-<8 hex>}, or that followed by {@code -<suffix>} (several namespaces
 * under one owned name: confd's BGP lab, the launcher's {@code <prefix>node-<i>}). A JVM killed before its shutdown hooks ran (SIGKILL: a
 * surefire fork killed on timeout) leaves them behind; the next fixture that starts recognises them by
 * name and removes those whose owner is gone. Only names of exactly this form are ever swept, and never
 * while their owner runs.
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
        if (!m.matches()) {
            return false; // not ours: never touched
        }
        return ProcessHandle.of(Long.parseLong(m.group(1))).map(p -> !p.isAlive()).orElse(true);
    }
}
