package calico.dataplane.nft;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.Map;

/** The few libnftables entry points we use (nftables/libnftables.h, 1.0.6). */
interface LibNftables extends Library {

    /** NFT_CTX_OUTPUT_JSON: JSON output, and (the trap) the switch that makes the parser accept JSON input. */
    int NFT_CTX_OUTPUT_JSON = 1 << 4;

    /** Loaded on first use; Debian ships only the versioned name, so fall back to it. */
    static LibNftables load() {
        Map<String, Object> options = Map.of(Library.OPTION_STRING_ENCODING, "UTF-8");
        try {
            return Native.load("nftables", LibNftables.class, options);
        } catch (UnsatisfiedLinkError first) {
            try {
                return Native.load("/usr/lib/x86_64-linux-gnu/libnftables.so.1", LibNftables.class, options);
            } catch (UnsatisfiedLinkError second) {
                second.addSuppressed(first);
                throw second;
            }
        }
    }

    Pointer nft_ctx_new(int flags);

    void nft_ctx_free(Pointer ctx);

    void nft_ctx_output_set_flags(Pointer ctx, int flags);

    void nft_ctx_set_dry_run(Pointer ctx, boolean dry);

    int nft_ctx_buffer_output(Pointer ctx);

    int nft_ctx_buffer_error(Pointer ctx);

    String nft_ctx_get_output_buffer(Pointer ctx);

    String nft_ctx_get_error_buffer(Pointer ctx);

    int nft_run_cmd_from_buffer(Pointer ctx, String buf);
}
