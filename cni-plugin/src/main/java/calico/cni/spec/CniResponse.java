package calico.cni.spec;

/** What goes back to the runtime: stdout bytes and the exit status. */
public record CniResponse(int exitCode, String stdout) {
}
