package calico.api.model;

/** A rule's action, written exactly as Calico does. */
public enum Action {
    Allow, Deny, Log, Pass
}
