package calico.whisker.web;

import java.io.IOException;
import java.io.Writer;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;

/**
 * Tomcat's own error page (a malformed request line, an illegal path) as the JSON error body with
 * the security headers: those requests never reach Spring or its filters.
 */
public final class JsonErrorReportValve extends ErrorReportValve {

    @Override
    protected void report(Request request, Response response, Throwable t) {
        int status = response.getStatus();
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        try {
            response.setContentType("application/json");
            response.setCharacterEncoding("UTF-8");
            SecurityHeadersFilter.apply(response, false, request.isSecure());
            Writer w = response.getReporter();
            if (w != null) {
                String m = response.getMessage();
                w.write(Json.write(ErrorBody.of(status, m == null || m.isBlank() ? "the request was rejected" : m,
                        null)));
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // the client is gone or the response committed meanwhile: nothing more to say
        }
    }
}
