package calico.libcalico.health;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;

/** Matches unless {@code calico.health.enabled} is {@code false}. */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ConditionalOnBooleanProperty(name = CalicoHealthProperties.PREFIX + ".enabled", matchIfMissing = true)
@interface ConditionalOnCalicoHealthEnabled {
}
