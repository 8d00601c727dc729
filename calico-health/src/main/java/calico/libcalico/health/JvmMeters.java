package calico.libcalico.health;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/**
 * The JVM and process meters a plain main (confd, felix) serves, as Actuator bound them for the Spring services:
 * memory, GC, threads, classes, CPU, uptime, file descriptors. {@link #close} stops the GC listener.
 */
public final class JvmMeters implements AutoCloseable {

    private final JvmGcMetrics gc = new JvmGcMetrics();

    /** Binds them to {@code registry}. */
    public JvmMeters(MeterRegistry registry) {
        for (MeterBinder binder : new MeterBinder[] {new JvmMemoryMetrics(), gc, new JvmThreadMetrics(),
                new ClassLoaderMetrics(), new ProcessorMetrics(), new UptimeMetrics(), new FileDescriptorMetrics()}) {
            binder.bindTo(registry);
        }
    }

    @Override
    public void close() {
        gc.close();
    }
}
