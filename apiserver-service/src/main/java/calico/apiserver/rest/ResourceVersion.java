package calico.apiserver.rest;

import calico.apiserver.errors.ApiException;

/** A request's {@code resourceVersion}, read as kube-apiserver reads it, for lists and watches alike. */
public final class ResourceVersion {

    private ResourceVersion() {
    }

    /**
     * Parses a resourceVersion as kube-apiserver's storage does (Go's {@code strconv.ParseUint},
     * base 10: digits only, no sign, at most 2^64-1). A bad one is answered as kube-apiserver 1.32
     * answers it: the storage's invalid-field error, which its REST layer does not translate, so
     * a 500 with no reason and the field error as the message.
     */
    public static long parse(String rv) {
        boolean digits = !rv.isEmpty() && rv.chars().allMatch(c -> c >= '0' && c <= '9');
        if (!digits) {
            throw ApiException.untranslated(500, "resourceVersion: Invalid value: \"" + rv + "\": strconv.ParseUint: "
                    + "parsing \"" + rv + "\": invalid syntax");
        }
        long v;
        try {
            v = Long.parseUnsignedLong(rv);
        } catch (NumberFormatException e) {
            throw ApiException.untranslated(500, "resourceVersion: Invalid value: \"" + rv + "\": strconv.ParseUint: "
                    + "parsing \"" + rv + "\": value out of range");
        }
        // Above Long.MAX_VALUE: a revision no datastore has reached; a watch from it waits, as kube's does.
        return v < 0 ? Long.MAX_VALUE : v;
    }
}
