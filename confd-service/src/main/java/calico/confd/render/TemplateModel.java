package calico.confd.render;

import java.util.List;

/** What {@code bird.cfg.mustache} prints; everything already decided and checked. */
record TemplateModel(String nodeName, String routerId, String logClasses, String debugProtocols,
                     List<FilterRenderer.Function> filterFunctions, BirdConfigBuilder.Exports v4,
                     BirdConfigBuilder.Exports v6, List<SessionView> sessions, String directInterfaces) {
}
