package calico.launcher.faults;

/**
 * One probe's outcome, as the prober prints it: {@code probe <epoch ms> allowed|denied ok|error <detail>}.
 * An allowed probe is ok when the server answered; a denied one when its connection did not get through.
 */
record Probe(long at, Kind kind, boolean ok, String detail) {

    enum Kind { ALLOWED, DENIED }

    String line() {
        return "probe " + at + " " + kind.name().toLowerCase() + " " + (ok ? "ok" : "error") + " " + detail;
    }

    /** {@return the probe a prober's line holds}, or null for any other line. */
    static Probe parse(String line) {
        String[] f = line.strip().split(" ", 5);
        if (f.length < 4 || !f[0].equals("probe")) {
            return null;
        }
        try {
            Kind kind = Kind.valueOf(f[2].toUpperCase());
            if (!f[3].equals("ok") && !f[3].equals("error")) {
                return null;
            }
            return new Probe(Long.parseLong(f[1]), kind, f[3].equals("ok"), f.length > 4 ? f[4] : "");
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
