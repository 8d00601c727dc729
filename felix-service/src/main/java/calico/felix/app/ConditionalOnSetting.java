package calico.felix.app;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Conditional;

/**
 * Present only when the setting {@link #name()} (or {@link #ifMissing()} when unset) matches the
 * regular expression {@link #matches()} in full. Felix's conditions on a setting's value use it
 * instead of {@code @ConditionalOnExpression}, which parses Spring's expression language at
 * start-up: ~100 classes loaded for three comparisons (FootprintBench, felix-service DESIGN.md).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Documented
@Conditional(OnSettingCondition.class)
@interface ConditionalOnSetting {

    /** The property, e.g. {@code felix.dataplane-driver}. */
    String name();

    /** The pattern the whole value must match ({@link java.util.regex.Pattern} syntax). */
    String matches();

    /** The value when the property is not set. */
    String ifMissing() default "";
}
