package calico.whisker.api;

import calico.whisker.goldmane.GoldmaneException;
import calico.whisker.web.ErrorBody;
import calico.whisker.web.Json;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Every error as the JSON of API.md: bad parameters, goldmane failures (gRPC status → HTTP
 * status), unknown paths, wrong methods, and anything unexpected; {@code /error} covers what
 * the container itself rejects. The body is written with a preset content type so that a
 * client asking for {@code text/event-stream} still gets it.
 */
@RestControllerAdvice
@RestController
public class ApiErrors implements ErrorController {

    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    static int status(GoldmaneException e) {
        return switch (e.code()) {
            case INVALID_ARGUMENT -> 400;
            case UNAVAILABLE -> 503;
            case DEADLINE_EXCEEDED -> 504;
            default -> 502;
        };
    }

    static ResponseEntity<String> body(int status, String message, String parameter) {
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON)
                .body(Json.write(ErrorBody.of(status, message, parameter)));
    }

    @ExceptionHandler(BadRequest.class)
    ResponseEntity<String> badRequest(BadRequest e) {
        return body(400, e.getMessage(), e.parameter());
    }

    @ExceptionHandler(GoldmaneException.class)
    ResponseEntity<String> goldmane(GoldmaneException e) {
        int status = status(e);
        if (status == 400) {
            return body(400, "goldmane rejected the request: " + e.description(), null);
        }
        log.warn("{}", e.getMessage());
        return body(status, e.getMessage(), null);
    }

    @ExceptionHandler(NoResourceFoundException.class)
    ResponseEntity<String> notFound(NoResourceFoundException e) {
        return body(404, "no such path: /" + e.getResourcePath(), null);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    ResponseEntity<String> method(HttpRequestMethodNotSupportedException e) {
        var b = ResponseEntity.status(405).contentType(MediaType.APPLICATION_JSON);
        if (e.getSupportedHttpMethods() != null) {
            b.allow(e.getSupportedHttpMethods().toArray(HttpMethod[]::new));
        }
        return b.body(Json.write(ErrorBody.of(405, "method " + e.getMethod() + " is not allowed here", null)));
    }

    @ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
    ResponseEntity<String> notAcceptable(HttpMediaTypeNotAcceptableException e) {
        return body(406, "this path answers application/json (or text/event-stream with watch=true)", null);
    }

    /**
     * The client of a live stream went away: nothing can be answered, and it is no server error.
     * (The watch itself cancels its gRPC call when its next write fails.)
     */
    @ExceptionHandler(org.springframework.web.context.request.async.AsyncRequestNotUsableException.class)
    void clientGone(Exception e) {
        log.debug("client went away: {}", e.getMessage());
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<String> unexpected(Exception e) {
        if (e instanceof org.springframework.web.ErrorResponse er) {
            int status = er.getStatusCode().value();
            return body(status, er.getBody().getDetail() == null ? e.getMessage() : er.getBody().getDetail(), null);
        }
        log.error("unexpected error", e);
        return body(500, "internal error", null);
    }

    /** Errors raised outside Spring MVC (container, filters) are forwarded here. */
    @RequestMapping("/error")
    ResponseEntity<String> error(HttpServletRequest req) {
        Object code = req.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer i ? i : 500;
        Object msg = req.getAttribute(RequestDispatcher.ERROR_MESSAGE);
        String message = msg instanceof String s && !s.isBlank() ? s
                : status == 404 ? "no such path" : status >= 500 ? "internal error" : "request failed";
        return body(status, message, null);
    }
}
