package calico.felix.app;

import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** {@link ConditionalOnSetting}: the setting's value, or its stand-in when unset, matched in full. */
final class OnSettingCondition implements Condition {

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Map<String, Object> a = metadata.getAnnotationAttributes(ConditionalOnSetting.class.getName());
        if (a == null) {
            return false;
        }
        String value = context.getEnvironment().getProperty((String) a.get("name"), (String) a.get("ifMissing"));
        return Pattern.compile((String) a.get("matches")).matcher(value).matches();
    }
}
