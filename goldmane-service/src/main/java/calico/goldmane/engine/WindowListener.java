package calico.goldmane.engine;

import calico.goldmane.store.Window;

/** Receives every window the writer copies out. Called on the writer: hand off, never block. */
public interface WindowListener {

    void onWindow(Window window);
}
