package calico.api.model;

/**
 * When an IP pool's traffic is encapsulated ({@code ipipMode}, {@code vxlanMode}). Calico
 * accepts exactly these spellings.
 */
public enum EncapsulationMode {
    Never, Always, CrossSubnet
}
