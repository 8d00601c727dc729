package calico.felix.app;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** How the tests start felix in process: {@code --NAME=value} arguments as the main takes them. */
final class FelixTestApps {

    private FelixTestApps() {
    }

    /** {@return the variables {@code args} set} ({@code --NAME=value} each; a later one wins) */
    static Map<String, String> variables(List<String> args) {
        Map<String, String> variables = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 3) {
                throw new IllegalArgumentException("expected --NAME=value, got " + arg);
            }
            variables.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return variables;
    }

    /** {@return felix started with {@code args} as its only variables} */
    static FelixApplication start(FelixApplication.Parts parts, String... args) {
        return FelixApplication.start(variables(List.of(args)), parts);
    }
}
