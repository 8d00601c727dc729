package calico.libcalico.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.ServerHttpMessageConvertersCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.converter.HttpMessageConverters;
import org.springframework.http.converter.json.MappingJackson2HttpMessageConverter;

class Jackson2WebJsonAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(Jackson2WebJsonAutoConfiguration.class));

    @Test
    @SuppressWarnings("removal")
    void withoutJackson3MvcWritesDatesAndDurationsAsIsoStrings() {
        runner.withClassLoader(new FilteredClassLoader("tools.jackson.")).run(context -> {
            HttpMessageConverters.ServerBuilder builder = HttpMessageConverters.forServer();
            context.getBean(ServerHttpMessageConvertersCustomizer.class).customize(builder);
            List<MappingJackson2HttpMessageConverter> json = StreamSupport.stream(builder.build().spliterator(), false)
                    .filter(MappingJackson2HttpMessageConverter.class::isInstance)
                    .map(MappingJackson2HttpMessageConverter.class::cast).toList();
            assertThat(json).hasSize(1);
            ObjectMapper mapper = json.get(0).getObjectMapper();
            assertThat(mapper.writeValueAsString(Map.of("at", Instant.ofEpochSecond(1_796_567_967), "took", Duration.ofMillis(33))))
                    .contains("\"at\":\"2026-12-06T", "\"took\":\"PT0.033S\"");
        });
    }

    @Test
    void withJackson3SpringBootsConverterServes() {
        runner.run(context -> assertThat(context).doesNotHaveBean(ServerHttpMessageConvertersCustomizer.class));
    }
}
