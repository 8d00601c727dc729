package calico.dataplane.iptables;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Input for one {@code ipset restore}: create/add/del/flush/swap/destroy lines in the order
 * given. Creates, adds and dels carry {@code -exist}, so re-applying is harmless.
 * {@link #replace} is the atomic full replacement Calico uses for resyncs: fill a temporary
 * set, swap it with the live one, destroy the old contents.
 */
public final class IpsetTransaction {

    /** IPSET_MAXNAMELEN is 32 bytes with the NUL. */
    public static final int MAX_NAME = 31;

    private final List<String> lines = new ArrayList<>();

    public static IpsetTransaction create() {
        return new IpsetTransaction();
    }

    public IpsetTransaction createSet(String name, IpsetType type, IpsetFamily family, int maxElements) {
        checkName(name);
        if (maxElements < 1) {
            throw new IllegalArgumentException("ipset maxelem: must be >= 1, got " + maxElements);
        }
        lines.add("create " + name + " " + type.kernelName() + " family " + family.kernelName() + " maxelem " + maxElements + " -exist");
        return this;
    }

    public IpsetTransaction add(String name, String member) {
        checkName(name);
        lines.add("add " + name + " " + checkMember(member) + " -exist");
        return this;
    }

    public IpsetTransaction del(String name, String member) {
        checkName(name);
        lines.add("del " + name + " " + checkMember(member) + " -exist");
        return this;
    }

    public IpsetTransaction flush(String name) {
        checkName(name);
        lines.add("flush " + name);
        return this;
    }

    public IpsetTransaction swap(String a, String b) {
        checkName(a);
        checkName(b);
        lines.add("swap " + a + " " + b);
        return this;
    }

    public IpsetTransaction destroy(String name) {
        checkName(name);
        lines.add("destroy " + name);
        return this;
    }

    /**
     * Makes {@code name} hold exactly {@code members}, atomically for packets: creates the set
     * if missing, fills {@link #tempName(String) a temporary set}, swaps, destroys the temporary.
     */
    public IpsetTransaction replace(String name, IpsetType type, IpsetFamily family, int maxElements, Collection<String> members) {
        String temp = tempName(name);
        createSet(name, type, family, maxElements);
        createSet(temp, type, family, maxElements);
        flush(temp);
        members.forEach(m -> add(temp, m));
        swap(name, temp);
        destroy(temp);
        return this;
    }

    /**
     * The temporary set used by {@link #replace}: for Calico names ({@code cali40…}, {@code cali60…})
     * the version digit's follower {@code 0} becomes {@code t} ({@code cali4t…}), keeping the length;
     * other names get {@code -t} appended (shortened to fit).
     */
    public static String tempName(String name) {
        checkName(name);
        if ((name.startsWith("cali40") || name.startsWith("cali60"))) {
            return name.substring(0, 5) + "t" + name.substring(6);
        }
        String base = name.length() > MAX_NAME - 2 ? name.substring(0, MAX_NAME - 2) : name;
        return base + "-t";
    }

    /** {@return the restore input}, one command a line. */
    public String render() {
        StringBuilder b = new StringBuilder();
        lines.forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }

    public boolean isEmpty() {
        return lines.isEmpty();
    }

    static void checkName(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME) {
            throw new IllegalArgumentException("ipset name: must be 1.." + MAX_NAME + " characters, got " + name);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c > '~') {
                throw new IllegalArgumentException("ipset name: " + name + " must be printable ASCII without spaces");
            }
        }
    }

    private static String checkMember(String member) {
        if (member == null || member.isEmpty() || member.chars().anyMatch(c -> c <= ' ')) {
            throw new IllegalArgumentException("ipset member: must be non-empty without spaces, got '" + member + "'");
        }
        return member;
    }
}
