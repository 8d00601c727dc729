package calico.ctl;

import calico.libcalico.datastore.config.DatastoreConfig;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** One calicoctl run through the entry point {@code main} uses: its exit status and what it printed. */
record CtlRun(int status, String stdout, String stderr) {

    static CtlRun of(Map<String, String> env, String stdin, String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        var ctl = new CalicoCtl(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                e -> DatastoreConfig.fromEnvironment(e).open());
        int status = ctl.run(List.of(args), env);
        return new CtlRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
