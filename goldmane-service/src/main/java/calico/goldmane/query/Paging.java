package calico.goldmane.query;

import calico.libcalico.goldmane.proto.ListMetadata;
import java.util.List;

/** A validated page request: page size 0 means everything on page 0. */
record Paging(int page, int size) {

    static Paging of(long page, long size, int maxPageSize, String pageField, String sizeField) {
        if (size < 0 || size > maxPageSize) {
            throw new InvalidRequest(sizeField, size + " is out of range 0.." + maxPageSize);
        }
        if (page < 0 || page > Integer.MAX_VALUE) {
            throw new InvalidRequest(pageField, page + " must not be negative");
        }
        if (size == 0 && page != 0) {
            throw new InvalidRequest(pageField, "page " + page + " needs a page size");
        }
        return new Paging((int) page, (int) size);
    }

    <T> List<T> slice(List<T> all) {
        if (size == 0) {
            return all;
        }
        long from = (long) page * size;
        if (from >= all.size()) {
            return List.of();
        }
        return all.subList((int) from, (int) Math.min(all.size(), from + size));
    }

    ListMetadata meta(int total) {
        long pages = size == 0 ? (total == 0 ? 0 : 1) : (total + size - 1) / size;
        return ListMetadata.newBuilder().setTotalResults(total).setTotalPages(pages).build();
    }
}
