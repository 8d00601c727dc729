package calico.api.model;

/** What a staged policy would do to its enforced counterpart when committed. */
public enum StagedAction {
    Set, Delete, Learn, Ignore
}
