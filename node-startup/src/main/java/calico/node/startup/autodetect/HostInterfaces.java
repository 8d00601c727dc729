package calico.node.startup.autodetect;

import java.util.List;

/** The interfaces of the network namespace start-up runs in (its node's). */
@FunctionalInterface
public interface HostInterfaces {

    /** {@return every interface with its addresses, by ascending index} */
    List<HostInterface> list();
}
