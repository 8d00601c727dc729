package calico.launcher.faults;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What {@code calicoctl ipam check} says: addresses in use and problems found (leaks among them). */
record IpamCheck(int inUse, int problems, String output) {

    private static final Pattern IN_USE = Pattern.compile("(?m)^Found (\\d+) in-use IPs\\.$");
    private static final Pattern PROBLEMS = Pattern.compile("(?m)^Check complete; found (\\d+) problems\\.$");

    static IpamCheck parse(String output) {
        Matcher u = IN_USE.matcher(output);
        Matcher p = PROBLEMS.matcher(output);
        if (!u.find() || !p.find()) {
            throw new IllegalArgumentException("calicoctl ipam check said neither 'Found N in-use IPs.' nor 'Check complete; found N problems.': "
                    + output.strip());
        }
        return new IpamCheck(Integer.parseInt(u.group(1)), Integer.parseInt(p.group(1)), output);
    }
}
