package calico.libcalico.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.http.converter.autoconfigure.ServerHttpMessageConvertersCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.http.converter.json.Jackson2ObjectMapperBuilder;
import org.springframework.http.converter.json.MappingJackson2HttpMessageConverter;

/**
 * A service's own MVC endpoints' JSON when it runs with Jackson 2 only (felix, confd and typha keep Spring
 * Boot's Jackson 3 off the class path so that one Jackson is loaded, issue 30): dates and durations as
 * ISO-8601 strings, as Spring Boot's Jackson 3 wrote them, not Jackson 2's default numbers (an
 * {@code Instant} as {@code 1.796E9}). Absent where Jackson 3 is present: Spring Boot's converter serves.
 */
@AutoConfiguration
@ConditionalOnClass({ObjectMapper.class, ServerHttpMessageConvertersCustomizer.class, Jackson2ObjectMapperBuilder.class})
@ConditionalOnMissingClass("tools.jackson.databind.json.JsonMapper")
class Jackson2WebJsonAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "jackson2IsoDatesJson")
    @SuppressWarnings("removal")
    ServerHttpMessageConvertersCustomizer jackson2IsoDatesJson() {
        ObjectMapper mapper = Jackson2ObjectMapperBuilder.json()
                .featuresToDisable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS, SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
                .build();
        return builder -> builder.withJsonConverter(new MappingJackson2HttpMessageConverter(mapper));
    }
}
