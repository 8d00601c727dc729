package calico.felix.app;

import calico.libcalico.health.HttpAnswers;
import calico.libcalico.health.HttpAnswers.Answer;
import com.sun.net.httpserver.HttpHandler;
import java.util.function.Supplier;

/**
 * The admin API's paths under {@link #ROOT}, each to one method of {@link FelixAdminController} or
 * {@link KernelDataplaneAdminController}; served as JSON by calico-health's {@link HttpAnswers#jsonAt}. An
 * unknown id or path is 404 with {@link FelixAdminController.ErrorView}.
 */
public final class FelixAdminApi {

    /** Where the API is served, and everything below it. */
    public static final String ROOT = "/felix/v1";

    private final FelixAdminController admin;
    private final KernelDataplaneAdminController dataplane;

    public FelixAdminApi(FelixAdminController admin, KernelDataplaneAdminController dataplane) {
        this.admin = admin;
        this.dataplane = dataplane;
    }

    /** {@return the handler to serve at {@link #ROOT}} */
    public HttpHandler handler() {
        return HttpAnswers.jsonAt(this::answer);
    }

    /** {@return the answer for {@code path}} (decoded, starting with {@link #ROOT}) */
    Answer answer(String path) {
        String rest = path.length() > ROOT.length() ? path.substring(ROOT.length() + 1) : "";
        String[] parts = rest.isEmpty() ? new String[0] : rest.split("/", -1);
        try {
            return switch (parts.length) {
                case 1 -> switch (parts[0]) {
                    case "endpoints" -> ok(admin::endpoints);
                    case "policies" -> ok(admin::policies);
                    case "profiles" -> ok(admin::profiles);
                    case "ipsets" -> ok(admin::ipSets);
                    case "routes" -> ok(admin::routes);
                    case "config" -> ok(admin::config);
                    case "status" -> ok(admin::status);
                    case "dataplane" -> ok(dataplane::dataplane);
                    default -> notFound(path);
                };
                case 2 -> switch (parts[0]) {
                    case "endpoints" -> ok(() -> admin.endpoint(null, parts[1]));
                    case "ipsets" -> ok(() -> admin.ipSet(parts[1]));
                    default -> notFound(path);
                };
                case 3 -> parts[0].equals("endpoints") ? ok(() -> admin.endpoint(parts[1], parts[2])) : notFound(path);
                default -> notFound(path);
            };
        } catch (FelixAdminController.NotFound e) {
            return new Answer(404, new FelixAdminController.ErrorView(404, e.getMessage()));
        }
    }

    private static Answer ok(Supplier<?> body) {
        return new Answer(200, body.get());
    }

    private static Answer notFound(String path) {
        return new Answer(404, new FelixAdminController.ErrorView(404, "no such path: " + path));
    }
}
