package calico.api.model;

import com.fasterxml.jackson.annotation.JsonValue;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which record fields an example sets: used to prove that a "rich" example really sets every
 * field reachable from its kind, so that a field added to a record without an example is
 * noticed. Fields are named {@code Record.component} (e.g. {@code EntityRule.notPorts}); a
 * field counts as set when any instance of its record in the example has a non-empty value.
 */
final class FieldCoverage {

    private FieldCoverage() {
    }

    /** {@return every field of every object-shaped record reachable from {@code type}}. */
    static Set<String> allFields(Class<?> type) {
        Set<String> out = new TreeSet<>();
        collectFields(type, new TreeSet<>(), out);
        return out;
    }

    /** {@return the fields that hold a non-empty value somewhere in {@code value}}. */
    static Set<String> setFields(Object value) {
        Set<String> out = new TreeSet<>();
        collectSet(value, out);
        return out;
    }

    private static void collectFields(Class<?> type, Set<String> seen, Set<String> out) {
        if (!isObjectRecord(type) || !seen.add(type.getName())) {
            return;
        }
        for (RecordComponent c : type.getRecordComponents()) {
            out.add(name(type, c));
            collectFields(elementType(c.getGenericType()), seen, out);
        }
    }

    private static void collectSet(Object value, Set<String> out) {
        if (value == null || !isObjectRecord(value.getClass())) {
            return;
        }
        for (RecordComponent c : value.getClass().getRecordComponents()) {
            Object v = get(c, value);
            if (isEmpty(v)) {
                continue;
            }
            out.add(name(value.getClass(), c));
            if (v instanceof Collection<?> list) {
                list.forEach(e -> collectSet(e, out));
            } else {
                collectSet(v, out);
            }
        }
    }

    private static String name(Class<?> type, RecordComponent c) {
        return type.getSimpleName() + "." + c.getName();
    }

    /** A record written as a JSON object (not a scalar such as {@link Port} or {@link ASNumber}). */
    private static boolean isObjectRecord(Class<?> type) {
        return type.isRecord() && Arrays.stream(type.getMethods()).noneMatch(m -> m.isAnnotationPresent(JsonValue.class));
    }

    private static Class<?> elementType(Type t) {
        if (t instanceof ParameterizedType p && Collection.class.isAssignableFrom((Class<?>) p.getRawType())) {
            return elementType(p.getActualTypeArguments()[0]);
        }
        if (t instanceof ParameterizedType p) {
            return (Class<?>) p.getRawType();
        }
        return (Class<?>) t;
    }

    private static boolean isEmpty(Object v) {
        return v == null
                || v instanceof Collection<?> c && c.isEmpty()
                || v instanceof Map<?, ?> m && m.isEmpty()
                || v instanceof String s && s.isEmpty();
    }

    private static Object get(RecordComponent c, Object owner) {
        try {
            return c.getAccessor().invoke(owner);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(e);
        }
    }
}
