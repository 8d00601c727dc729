package calico.dataplane.bpf;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The tcx links one driver put on hooks, each pinned and also held open. A link lives while a pin
 * or a descriptor holds it: holding it means a stranger removing the pin does not take the program
 * off the hook. (Were the pin the only reference, the kernel would release the link some time
 * after the unlink, in a deferred work item, and the hook would be open until the next refresh
 * noticed; the refresh puts a missing pin back instead. For the same reason {@link #detach}
 * detaches the link itself rather than relying on that release.) {@link #close} lets go of the
 * descriptors and keeps the pins, so the programs outlive the process. Confined to the driver's
 * thread.
 */
public final class TcxLinks implements AutoCloseable {

    /** What {@link #check} found of a link this holds. */
    public enum State {
        /** On its hook and pinned. */
        ATTACHED,
        /** On its hook, its pin gone or replaced: {@link #repin} puts it back. */
        PIN_MISSING,
        /** Off its hook (detached by someone, or never held here): attach again. */
        DETACHED
    }

    /** Open link descriptors by pin path. */
    private final Map<Path, Integer> held = new HashMap<>();

    /**
     * Puts {@code progFd} on {@code ifindex}'s hook {@code dir}: in place in the link held or
     * pinned at {@code pin} when that link is on this interface ({@code BPF_LINK_UPDATE}, no moment
     * without a program), else as a new link pinned there (a gone or re-created interface's pin is
     * replaced).
     *
     * @param program the program's name, for the message only
     * @throws BpfException naming the interface and the program
     */
    public void attach(int ifindex, String ifName, TcDirection dir, int progFd, String program, Path pin) {
        String what = "tcx: attaching program " + program + " to " + ifName + " (ifindex " + ifindex + ") "
                + dir.name().toLowerCase(java.util.Locale.ROOT);
        Integer link = held.get(pin);
        if (link != null && onInterface(link, ifindex)) {
            update(link, progFd, what);
            pin(link, pin, what);
            return;
        }
        release(pin);
        // An earlier run's link, pinned: adopted when it is on this interface.
        if (Files.exists(pin)) {
            int earlier = BpfCalls.lib().bpf_obj_get(pin.toString());
            if (earlier >= 0) {
                if (onInterface(earlier, ifindex)) {
                    held.put(pin, earlier);
                    update(earlier, progFd, what);
                    return;
                }
                BpfFs.LibC.INSTANCE.close(earlier);
            }
            Tcx.delete(pin); // another interface's (a gone one's) link
        }
        int created = BpfCalls.lib().bpf_link_create(progFd, ifindex,
                dir == TcDirection.INGRESS ? Tcx.BPF_TCX_INGRESS : Tcx.BPF_TCX_EGRESS, null);
        if (created < 0) {
            throw new BpfException(what, BpfCalls.errno(created));
        }
        held.put(pin, created);
        try {
            Files.createDirectories(pin.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException(what + ": " + pin.getParent(), e);
        }
        pin(created, pin, what);
    }

    /** {@return the state of the link held for {@code pin}}, expected on {@code ifindex} */
    public State check(Path pin, int ifindex) {
        Integer link = held.get(pin);
        Optional<Tcx.LinkState> state = link == null ? Optional.empty() : Tcx.state(link);
        if (state.isEmpty() || state.get().ifindex() != ifindex) {
            return State.DETACHED;
        }
        return pinnedAt(state.get().id(), pin) ? State.ATTACHED : State.PIN_MISSING;
    }

    /** Pins the link held for {@code pin} there again (whatever a stranger left there goes). */
    public void repin(Path pin) {
        Integer link = held.get(pin);
        if (link == null) {
            throw new IllegalStateException("no tcx link held for " + pin);
        }
        pin(link, pin, "tcx: pinning the link of " + pin.getFileName() + " again");
    }

    /**
     * {@return whether a link was held or pinned at {@code pin}}: takes it off its hook at once
     * ({@code BPF_LINK_DETACH}), lets go of it and removes the pin. Letting go alone would leave the
     * program on the hook until the kernel's deferred release of the unlinked pin ran (later still
     * under load), or for as long as anyone else holds the link.
     */
    public boolean detach(Path pin) {
        // BPF_LINK_DETACH answers 0 also for a link already off its hook (interface gone, a stranger's detach); a
        // refusal (no link pinned there) is left to the pin's removal.
        Integer link = held.get(pin);
        if (link != null) {
            BpfCalls.lib().bpf_link_detach(link);
        } else if (Files.exists(pin)) {
            try {
                Tcx.detachLink(pin);
            } catch (BpfException e) {
                // not a link, or already gone: the pin's removal below is all there is to do
            }
        }
        boolean wasHeld = release(pin);
        return Tcx.delete(pin) || wasHeld;
    }

    /** {@return the pins of the links held} */
    public java.util.Set<Path> heldPins() {
        return java.util.Set.copyOf(held.keySet());
    }

    /** Lets go of every descriptor; the pins keep the links on their hooks. */
    @Override
    public void close() {
        for (int fd : held.values()) {
            BpfFs.LibC.INSTANCE.close(fd);
        }
        held.clear();
    }

    /** {@return whether a descriptor was held for {@code pin}}, closing it. */
    private boolean release(Path pin) {
        Integer link = held.remove(pin);
        if (link != null) {
            BpfFs.LibC.INSTANCE.close(link);
        }
        return link != null;
    }

    private static boolean onInterface(int link, int ifindex) {
        return Tcx.state(link).map(s -> s.ifindex() == ifindex).orElse(false);
    }

    private static void update(int link, int progFd, String what) {
        int rc = BpfCalls.lib().bpf_link_update(link, progFd, null);
        if (rc != 0) {
            throw new BpfException(what + ": update of the pinned link", BpfCalls.errno(rc));
        }
    }

    /** Pins {@code link} at {@code pin} unless it is pinned there already; another link's pin there goes. */
    private static void pin(int link, Path pin, String what) {
        if (pinnedAt(Tcx.state(link).map(Tcx.LinkState::id).orElse(-1), pin)) {
            return;
        }
        Tcx.delete(pin);
        int rc = BpfCalls.lib().bpf_obj_pin(link, pin.toString());
        if (rc != 0) {
            throw new BpfException(what + ": pin " + pin, BpfCalls.errno(rc));
        }
    }

    /** {@return whether the link pinned at {@code pin} is the one with ID {@code linkId}} */
    private static boolean pinnedAt(int linkId, Path pin) {
        return Tcx.pinned(pin).map(Tcx.LinkState::id).orElse(-2) == linkId;
    }
}
