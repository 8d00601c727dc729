package calico.felix.dataplane.nft;

import calico.dataplane.nft.TableRef;
import calico.felix.dataplane.rules.IpFamily;
import calico.felix.dataplane.rules.Names;
import calico.felix.dataplane.rules.Ruleset;
import java.util.Locale;

/**
 * Names inside our one nftables table, {@code inet calico}. iptables keeps a chain per table
 * (filter, nat, ...) in separate namespaces, and Calico reuses names across them
 * ({@code cali-OUTPUT}); here every chain shares one table, so chains of tables other than
 * filter get the table's name as a prefix. Base chains are {@code <table>-<HOOK>}, which no
 * {@code cali-} chain can collide with.
 */
public final class NftNames {

    /** The only table we own. */
    public static final TableRef TABLE = TableRef.inet("calico");

    private NftNames() {
    }

    /** {@return the kernel name of {@code chain} of iptables-style {@code table}} */
    public static String chain(Ruleset.Table table, String chain) {
        return table == Ruleset.Table.FILTER ? chain : lower(table) + "-" + chain;
    }

    /** {@return the base chain of {@code hook} in {@code table}}, e.g. {@code filter-FORWARD} */
    public static String baseChain(Ruleset.Table table, Ruleset.Hook hook) {
        return lower(table) + "-" + hook.name();
    }

    /** {@return the verdict map a dispatch chain looks interfaces up in} */
    public static String dispatchMap(String kernelChain) {
        return kernelChain + "-map";
    }

    /** {@return the kernel name of a set}: {@code cali40…}/{@code cali60…}, the same names iptables' ipsets get */
    public static String set(IpFamily family, String setId) {
        return Names.ipSet(family, setId);
    }

    private static String lower(Ruleset.Table table) {
        return table.name().toLowerCase(Locale.ROOT);
    }
}
