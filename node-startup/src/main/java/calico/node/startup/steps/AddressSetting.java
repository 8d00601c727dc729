package calico.node.startup.steps;

import calico.api.net.Cidr;

/**
 * What {@code IP} or {@code IP6} asks for, as Calico reads them: unset (IPv4: keep the Node's
 * address, autodetect if it has none; IPv6: keep it), {@code autodetect} (detect at every start),
 * {@code none} (keep what the Node has, detect nothing) or an address, with or without its prefix.
 */
public sealed interface AddressSetting {

    record Unset() implements AddressSetting {
    }

    record Autodetect() implements AddressSetting {
    }

    record None() implements AddressSetting {
    }

    /** An address; {@code cidr} is a single address when no prefix was given (the host's is looked up). */
    record Explicit(Cidr cidr, boolean prefixGiven) implements AddressSetting {
    }

    /**
     * {@return the setting {@code text} names}
     *
     * @param setting how errors name it, e.g. {@code node.ip (IP)}
     * @throws IllegalArgumentException naming the setting when it is no address of that version
     */
    static AddressSetting parse(String text, int version, String setting) {
        String t = text == null ? "" : text.trim();
        if (t.isEmpty()) {
            return new Unset();
        }
        if (t.equals("autodetect")) {
            return new Autodetect();
        }
        if (t.equals("none")) {
            return new None();
        }
        Cidr c = Cidr.tryParseCidrOrIp(t).filter(x -> x.version() == version).orElseThrow(() ->
                new IllegalArgumentException(setting + ": \"" + t + "\" is not an IPv" + version
                        + " address (with or without /prefix), autodetect or none"));
        return new Explicit(c, t.contains("/"));
    }
}
