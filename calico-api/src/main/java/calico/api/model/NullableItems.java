package calico.api.model;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a list whose items may be {@code null} in the JSON (an IPAM block's free addresses), so
 * that its schema says {@code nullable: true} for them: a structural schema refuses a {@code null}
 * item otherwise. It belongs to the model, which declares it; {@code schema.ModelSchemas} reads it
 * (the schema depends on the model, never the other way).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.RECORD_COMPONENT})
public @interface NullableItems {
}
