package calico.whisker.browser;

import calico.libcalico.goldmane.proto.Flow;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * whisker-ui speed in Debian's Chromium against a real whisker-backend and goldmane holding
 * 20,000 flows: first page, all rows, scroll frame times, live mode at 1,000 new flows/s
 * (figures measured in the page by e2e/bench.mjs). Prints figures; asserts nothing.
 * <pre>bench/run.sh whisker-backend calico.whisker.browser.WhiskerUiBench [flows] [livePerSecond] [liveSeconds]</pre>
 */
public final class WhiskerUiBench {

    private WhiskerUiBench() {
    }

    public static void main(String[] args) throws Exception {
        int flows = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int perSecond = args.length > 1 ? Integer.parseInt(args[1]) : 1_000;
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
        Path dir = Files.createTempDirectory("whisker-ui-bench");
        Path signals = Files.createDirectories(dir.resolve("signals"));
        try (BrowserStack stack = new BrowserStack(dir, 1000)) {
            long now = System.currentTimeMillis() / 1000;
            List<Flow> all = DemoFlows.many(now, flows, 500);
            for (int i = 0; i < all.size(); i += 1000) {
                stack.goldmane.feed(all.subList(i, Math.min(all.size(), i + 1000)));
            }
            System.out.printf("goldmane holds %,d flow keys; live load %,d flows/s for %d s%n", flows, perSecond, seconds);
            Thread feeder = new Thread(() -> feedLive(stack, signals, perSecond, seconds), "live-feeder");
            feeder.setDaemon(true);
            feeder.start();
            Path shots = Files.createDirectories(Path.of("whisker-backend", "target", "whisker-ui-screenshots").toAbsolutePath());
            BrowserStack.NodeRun run = stack.node("bench.mjs", Map.of("BENCH_SIGNAL_DIR", signals.toString(),
                    "BENCH_EXPECT_ROWS", String.valueOf(flows), "SCREENSHOT_DIR", shots.toString()), 900);
            System.out.println(run.output());
            System.out.println("exit " + run.exit());
        }
        System.exit(0);
    }

    /** Waits for the page's live-started signal, then feeds {@code perSecond} new keys each second. */
    private static void feedLive(BrowserStack stack, Path signals, int perSecond, int seconds) {
        try {
            while (!Files.exists(signals.resolve("live-started"))) {
                Thread.sleep(100);
            }
            long fed = 0;
            long t0 = System.nanoTime();
            for (int s = 0; s < seconds; s++) {
                stack.goldmane.feed(DemoFlows.liveBatch(System.currentTimeMillis() / 1000, 10_000 + s, perSecond));
                fed += perSecond;
                long next = t0 + (s + 1) * 1_000_000_000L;
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
            }
            Files.writeString(signals.resolve("live-done"), String.valueOf(fed));
        } catch (Exception e) {
            e.printStackTrace();
        }
    }
}
