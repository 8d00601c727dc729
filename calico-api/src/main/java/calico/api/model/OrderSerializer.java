package calico.api.model;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;

/**
 * Writes a policy or tier {@code order} the way a user writes it: integral values without a
 * fraction ({@code 100}, not {@code 100.0}), others as decimals. Calico stores order as a
 * float64, so both forms read back to the same value.
 */
public final class OrderSerializer extends StdSerializer<Double> {

    /** Largest magnitude below which every integral double is exactly a long. */
    private static final double EXACT_LONG_LIMIT = 0x1p53;

    public OrderSerializer() {
        super(Double.class);
    }

    @Override
    public void serialize(Double value, JsonGenerator gen, SerializerProvider provider) throws IOException {
        double d = value;
        boolean negativeZero = d == 0.0 && Double.doubleToRawLongBits(d) != 0L;
        if (!negativeZero && d == Math.rint(d) && Math.abs(d) < EXACT_LONG_LIMIT) {
            gen.writeNumber((long) d);
        } else {
            gen.writeNumber(d);
        }
    }
}
