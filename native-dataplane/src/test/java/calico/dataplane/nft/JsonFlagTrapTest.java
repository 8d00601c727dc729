package calico.dataplane.nft;

import static org.assertj.core.api.Assertions.assertThat;

import calico.dataplane.testing.NetNs;
import com.sun.jna.Pointer;
import org.junit.jupiter.api.Test;

/** Pins the libnftables 1.0.6 behaviour that {@link Nftables#open} works around. */
class JsonFlagTrapTest {

    private static final String ADD_TABLE = "{\"nftables\":[{\"add\":{\"table\":{\"family\":\"inet\",\"name\":\"trap\"}}}]}";

    @Test
    void jsonInputIsParsedOnlyWithTheJsonOutputFlag() {
        try (NetNs ns = NetNs.create("calico-trap")) {
            int[] status = ns.call(() -> new int[] {runOnFreshContext(0), runOnFreshContext(LibNftables.NFT_CTX_OUTPUT_JSON)});
            assertThat(status[0]).as("JSON without the flag").isNotZero();
            assertThat(status[1]).as("JSON with the flag").isZero();
            assertThat(ns.exec("nft", "list", "tables")).contains("table inet trap");
        }
    }

    private static int runOnFreshContext(int outputFlags) {
        LibNftables lib = LibNftables.load();
        Pointer ctx = lib.nft_ctx_new(0);
        try {
            lib.nft_ctx_output_set_flags(ctx, outputFlags);
            lib.nft_ctx_buffer_output(ctx);
            lib.nft_ctx_buffer_error(ctx);
            return lib.nft_run_cmd_from_buffer(ctx, ADD_TABLE);
        } finally {
            lib.nft_ctx_free(ctx);
        }
    }
}
