package calico.felix.calc;

/**
 * Receives the infrastructure stages' output (config, host metadata, IP pools, routes): the
 * event sequencer implements it, coalesces by key, and emits in its flush order.
 */
@FunctionalInterface
public interface InfraListener {
    void onInfraUpdate(DataplaneUpdate update);
}
