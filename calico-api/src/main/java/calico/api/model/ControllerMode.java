package calico.api.model;

/** An on/off switch in KubeControllersConfiguration; Calico accepts exactly these spellings. */
public enum ControllerMode {
    Enabled, Disabled
}
