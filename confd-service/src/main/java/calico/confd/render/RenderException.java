package calico.confd.render;

/** Nothing can be rendered for this node (it is missing or has no BGP address); the last config stays. */
public class RenderException extends RuntimeException {

    public RenderException(String message) {
        super(message);
    }
}
