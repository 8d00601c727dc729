package calico.felix.calc;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Values made once per key by a pure function, kept until there are {@code limit} of them and
 * then all dropped: the keys in use at any time are far fewer than the limit, so the memo only
 * has to stay bounded, not keep the best ones. Not thread-safe (one owner thread).
 */
public final class BoundedMemo<K, V> {

    private final int limit;
    private final Map<K, V> values = new HashMap<>();

    public BoundedMemo(int limit) {
        this.limit = limit;
    }

    /** {@return the value of {@code key}}, made by {@code make} unless this memo holds it */
    public V get(K key, Function<? super K, ? extends V> make) {
        V value = values.get(key);
        if (value == null) {
            if (values.size() >= limit) {
                values.clear();
            }
            value = make.apply(key);
            values.put(key, value);
        }
        return value;
    }
}
